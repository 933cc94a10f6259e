// Package config reads the agcore configuration file and turns it into a
// runtime configuration.
//
// The file is YAML (see docs/agcore.example.yaml for every key and its
// default). Settings come from, in increasing order of precedence: the
// defaults (Default), the file (Load), the environment (ApplyEnv:
// AGCORE_DATA_DIR, OPENAI_BASE_URL, OPENAI_MODEL; OPENAI_API_KEY through
// the openai provider's api_key_env) and flags (Apply). Build then makes
// the actors.Config: providers, prices, agents, limits, and the tools
// behind the permission pipeline (the built-in ones and the WebAssembly
// tools of the wasm folder, which Build loads and follows). The serve section configures the HTTP
// API of `agcore serve` (see Serve), whose flags override it.
//
//	cfg, err := config.Load("agcore.yaml")
//	if err != nil {
//		return err // agcore.yaml:12: agents[1].model: unknown provider "foo" (known: openai, mock)
//	}
//	built, err := config.Build(ctx, cfg, config.BuildOptions{Logger: log})
//	if err != nil {
//		return err
//	}
//	defer built.Close()
//	rt, err := actors.New(built.Runtime)
//
// # Errors
//
// A file that is not valid YAML, has an unknown key, a value of the wrong
// type or a value that fails validation gives an *Error (matching
// ErrInvalid) whose problems each name the file, the line and the key.
// Secrets never go in the file: api_key_env and bearer_token_env name the
// environment variables that hold them, and an MCP server's bearer_token
// and header values take <secret_ref:NAME> placeholders, read from
// AGCORE_SECRET_NAME and masked by the redactor.
package config
