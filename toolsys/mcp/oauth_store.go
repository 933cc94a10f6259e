package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/oauth2"
)

// ErrNoToken is returned by TokenStore.Load when nothing is stored for a
// server.
var ErrNoToken = errors.New("no stored oauth token")

// ErrTokenFileMode is wrapped by the error FileTokenStore.Load returns
// for a token file other users could read or write.
var ErrTokenFileMode = errors.New("oauth token file is open to other users")

// TokenRecord is what is stored of one server's authorization: the
// client agcore is registered as, the authorization server's token
// endpoint, and the token.
type TokenRecord struct {
	// ServerURL is the MCP server (the resource) the token was issued for.
	ServerURL string `json:"server_url"`
	// ClientID and ClientSecret are the client agcore authorized as.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthURL and TokenURL are the authorization server's endpoints.
	AuthURL  string `json:"auth_url"`
	TokenURL string `json:"token_url"`
	// AuthStyle is how the client authenticates at TokenURL
	// (oauth2.AuthStyle).
	AuthStyle int `json:"auth_style"`
	// Scopes are the scopes granted.
	Scopes []string `json:"scopes,omitempty"`
	// Token is the access token, its expiry and the refresh token.
	Token *oauth2.Token `json:"token"`
}

// newTokenRecord records tok, obtained for serverURL with oc.
func newTokenRecord(serverURL string, oc *oauth2.Config, tok *oauth2.Token) TokenRecord {
	scopes := oc.Scopes
	if s, ok := tok.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		scopes = strings.Fields(s)
	}
	t := *tok
	return TokenRecord{ServerURL: serverURL, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
		AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle),
		Scopes: scopes, Token: &t}
}

// config returns the OAuth client configuration that refreshes r's token.
func (r TokenRecord) config() *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)}}
}

// TokenStore keeps one TokenRecord per server name. Implementations must
// be safe for concurrent use.
type TokenStore interface {
	// Load returns the record of server, or an error wrapping ErrNoToken.
	Load(server string) (TokenRecord, error)
	// Save replaces the record of server.
	Save(server string, rec TokenRecord) error
}

// MemoryTokenStore keeps records in memory.
type MemoryTokenStore struct {
	mu   sync.Mutex
	recs map[string]TokenRecord
}

// NewMemoryTokenStore returns an empty MemoryTokenStore.
func NewMemoryTokenStore() *MemoryTokenStore {
	return &MemoryTokenStore{recs: map[string]TokenRecord{}}
}

// Load implements TokenStore.
func (m *MemoryTokenStore) Load(server string) (TokenRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.recs[server]
	if !ok {
		return TokenRecord{}, fmt.Errorf("server %s: %w", server, ErrNoToken)
	}
	return rec, nil
}

// Save implements TokenStore.
func (m *MemoryTokenStore) Save(server string, rec TokenRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[server] = rec
	return nil
}

// FileTokenStore keeps each server's record in Dir/<server>.json, a file
// of mode 0600 in a directory of mode 0700, replaced atomically. It
// refuses to read a file other users could read or write.
type FileTokenStore struct {
	// Dir is the directory of the files, created on the first Save.
	// Required.
	Dir string

	mu sync.Mutex
}

// path returns the file of server; server names are [a-zA-Z0-9_-].
func (s *FileTokenStore) path(server string) (string, error) {
	if !serverNameRE.MatchString(server) {
		return "", fmt.Errorf("%w: server name %q", ErrInvalidConfig, server)
	}
	if s.Dir == "" {
		return "", fmt.Errorf("%w: FileTokenStore.Dir is empty", ErrInvalidConfig)
	}
	return filepath.Join(s.Dir, server+".json"), nil
}

// Load implements TokenStore.
func (s *FileTokenStore) Load(server string) (TokenRecord, error) {
	p, err := s.path(server)
	if err != nil {
		return TokenRecord{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return TokenRecord{}, fmt.Errorf("server %s: %w", server, ErrNoToken)
	}
	if err != nil {
		return TokenRecord{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return TokenRecord{}, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return TokenRecord{}, fmt.Errorf("%s (mode %04o): %w; run chmod 600 on it, or delete it to authorize again",
			p, st.Mode().Perm(), ErrTokenFileMode)
	}
	var rec TokenRecord
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		return TokenRecord{}, fmt.Errorf("oauth token file %s: %w", p, err)
	}
	if rec.Token == nil {
		return TokenRecord{}, fmt.Errorf("oauth token file %s: no token: %w", p, ErrNoToken)
	}
	return rec, nil
}

// Save implements TokenStore.
func (s *FileTokenStore) Save(server string, rec TokenRecord) error {
	p, err := s.path(server)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("oauth token directory: %w", err)
	}
	tmp, err := os.CreateTemp(s.Dir, "."+server+"-*.tmp")
	if err != nil {
		return fmt.Errorf("oauth token file: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; Chmod makes sure of it whatever the
	// platform does.
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("oauth token file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("oauth token file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("oauth token file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("oauth token file: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("oauth token file: %w", err)
	}
	return nil
}
