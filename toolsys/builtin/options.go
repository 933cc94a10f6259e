package builtin

import (
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// Options configures the built-in tools. The zero value is valid: every
// field documents what zero means.
type Options struct {
	// BashTimeout is how long a foreground bash command may run when the
	// call names no timeout. Zero means 2 minutes.
	BashTimeout time.Duration
	// BashMaxOutput is how many bytes of a foreground command's combined
	// output are kept; beyond it the start is dropped and the tail kept.
	// Zero means 64 KiB.
	BashMaxOutput int
	// MaxReadBytes caps the text read_file returns in one call. Zero means
	// 256 KiB.
	MaxReadBytes int
	// HTTPClient makes web_fetch's requests. Nil means a client with
	// http.DefaultTransport. Its CheckRedirect is replaced so that every
	// redirect passes the allowed-hosts policy.
	HTTPClient *http.Client
	// FetchMaxBytes caps the body web_fetch reads. Zero means 2 MiB.
	FetchMaxBytes int64
	// FetchTimeout bounds one web_fetch call. Zero means 30 seconds.
	FetchTimeout time.Duration
	// FetchAllowedHosts are the hosts web_fetch may reach, on every
	// redirect too: "docs.example.com", "*.example.com" for any subdomain
	// (not example.com itself), "*" for any host. A call whose Context
	// names AllowedHosts uses those instead. Empty means none: web_fetch
	// refuses every URL, and its description tells the model so.
	FetchAllowedHosts []string
	// GrepMaxResults is grep's default result cap. Zero means 200.
	GrepMaxResults int
	// GlobMaxResults caps the paths glob returns. Zero means 500.
	GlobMaxResults int
	// Sandbox confines bash's commands, foreground and background, and
	// decides what happens where it cannot. Nil means
	// sandbox.New(sandbox.Config{Logger: Logger}): commands write only in
	// the workspace and their private directory, connect nowhere, and are
	// refused on a host that cannot confine them. All shares one between
	// bash and bash_process.
	Sandbox *sandbox.Sandbox
	// Processes holds bash's background processes, shared with
	// bash_process. Nil means All creates one, which nobody closes: pass
	// your own and Close it when the tools are no longer used.
	Processes *ProcessManager
	// AllowHardlinks lets read_file, edit_file, write_file and grep work
	// on a regular file whose link count is above 1. False (the default)
	// refuses such a file: a hard link made inside the workspace (by a
	// bash command, say) to a file outside it is that outside file, and no
	// path check can see it. Set it for workspaces that use hard links on
	// purpose (some package managers' stores).
	AllowHardlinks bool
	// Logger receives diagnostics. The zero Logger discards them.
	Logger zerolog.Logger
}

// Defaults of Options.
const (
	DefaultBashTimeout    = 2 * time.Minute
	DefaultBashMaxOutput  = 64 << 10
	DefaultMaxReadBytes   = 256 << 10
	DefaultFetchMaxBytes  = 2 << 20
	DefaultFetchTimeout   = 30 * time.Second
	DefaultGrepMaxResults = 200
	DefaultGlobMaxResults = 500
)

// filePolicy is the workspace file policy o asks for.
func (o Options) filePolicy() toolsys.FilePolicy {
	return toolsys.FilePolicy{AllowHardlinks: o.AllowHardlinks}
}

// withDefaults returns a copy of o with every zero field filled in. It does
// not create a ProcessManager or a Sandbox.
func (o Options) withDefaults() Options {
	if o.BashTimeout <= 0 {
		o.BashTimeout = DefaultBashTimeout
	}
	if o.BashMaxOutput <= 0 {
		o.BashMaxOutput = DefaultBashMaxOutput
	}
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport}
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.GrepMaxResults <= 0 {
		o.GrepMaxResults = DefaultGrepMaxResults
	}
	if o.GlobMaxResults <= 0 {
		o.GlobMaxResults = DefaultGlobMaxResults
	}
	return o
}

// sandbox returns o.Sandbox, or a new sandbox with the zero configuration
// (which probes nothing until used).
func (o Options) sandbox() *sandbox.Sandbox {
	if o.Sandbox != nil {
		return o.Sandbox
	}
	return sandbox.New(sandbox.Config{Logger: o.Logger})
}
