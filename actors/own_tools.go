package actors

// This file holds OwnTools, which describes the runtime's own tools a
// configuration turns on, for listings outside a running Runtime.

import "github.com/agcore/agcore/toolsys"

// OwnTools returns the runtime's own tools that cfg turns on, as a Runtime
// built from cfg offers them to the model: retrieve (Config.Knowledge),
// spawn_agent (SubAgents.Enabled) and transfer_to_agent
// (SubAgents.Handoff). Their source is toolsys.SourceRuntime. They are for
// listings such as `agcore tools list`: they describe themselves (name,
// description, schema, permission), and only a Runtime runs them, since
// they act on a session.
func OwnTools(cfg Config) []toolsys.Tool {
	rt := &Runtime{cfg: cfg, swarm: cfg.SubAgents.withDefaults(), agents: make(map[string]*agent, len(cfg.Agents))}
	for _, p := range cfg.Agents {
		rt.agents[p.Name] = nil // the descriptions name the agents
	}
	// A fresh registry holds no other tool, so these registrations of
	// fixed tools cannot collide.
	reg := toolsys.NewRegistry(toolsys.Config{})
	if cfg.Knowledge != nil {
		_ = toolsys.RegisterTyped[retrieveParams](reg, &retrieveTool{rt: rt}, toolsys.WithSource(toolsys.SourceRuntime))
	}
	if rt.swarm.Enabled {
		_ = toolsys.RegisterTyped[spawnParams](reg, &spawnTool{rt: rt}, toolsys.WithSource(toolsys.SourceRuntime))
	}
	if rt.swarm.Handoff {
		_ = toolsys.RegisterTyped[transferParams](reg, &transferTool{rt: rt}, toolsys.WithSource(toolsys.SourceRuntime))
	}
	return reg.List()
}
