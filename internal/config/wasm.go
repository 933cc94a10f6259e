package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

// wasmDir returns the folder of WebAssembly tools: wasm.dir, else
// <data_dir>/tools; "" when neither is set.
func (c *Config) wasmDir() string {
	if c.WASM.Dir != "" {
		return c.WASM.Dir
	}
	if c.DataDir == "" {
		return ""
	}
	return filepath.Join(c.DataDir, "tools")
}

// wasmTools registers the WebAssembly tools of the folder in b.Tools. For
// a runtime it creates the folder and watches it until Close; with
// ToolsOnly it loads what is there once and creates nothing. A file that
// does not load is left out, and logged for a runtime (b.WASM.Refused
// lists it). A folder that cannot be created is an error; one that cannot
// be watched is loaded once, with a warning.
func (b *Built) wasmTools(ctx context.Context, c *Config, opts BuildOptions) error {
	dir := c.wasmDir()
	if dir == "" {
		return nil
	}
	if opts.ToolsOnly {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: wasm.dir: %w", err)
	}
	log := opts.Logger.With().Str("component", "wasm").Logger()
	cfg := wasm.Config{MemoryLimitPages: c.WASM.MemoryLimitPages, Timeout: c.WASM.Timeout, OutputLimit: c.WASM.OutputLimit,
		Files: toolsys.FilePolicy{AllowHardlinks: c.Files.AllowHardlinks}, Logger: log}
	if c.DataDir != "" {
		if _, err := os.Stat(c.DataDir); err == nil || !opts.ToolsOnly {
			cfg.CacheDir = filepath.Join(c.DataDir, "cache", "wasm")
		}
	}
	rt, err := wasm.NewRuntime(ctx, cfg)
	if err != nil {
		return fmt.Errorf("config: wasm: %w", err)
	}
	b.closers = append(b.closers, func() error { return rt.Close(context.Background()) })
	fc := wasm.FolderConfig{Dir: dir, Registry: b.Tools, Logger: log}
	if opts.ToolsOnly {
		fc.Logger = zerolog.Nop() // the caller reports b.WASM.Refused
	}
	folder, err := rt.Folder(fc)
	if err != nil {
		return fmt.Errorf("config: wasm.dir: %w", err)
	}
	b.closers = append(b.closers, folder.Close)
	b.WASM = folder
	if opts.ToolsOnly {
		if err := folder.Sync(ctx); err != nil {
			log.Debug().Err(err).Msg("wasm: files left out")
		}
		return nil
	}
	if err := folder.Watch(context.WithoutCancel(ctx)); err != nil {
		// Out of inotify watches, say: the tools still load, once.
		log.Warn().Err(err).Str("dir", dir).Msg("wasm: the tool folder cannot be watched; its tools are loaded at start only")
		_ = folder.Sync(ctx)
	}
	return nil
}
