// Package schedule keeps scheduled agent runs: cron schedules that submit
// a prompt to a session at their fire times, stored durably in the
// runtime's Badger store (memory.Store).
//
//	store := schedule.New(mem, schedule.Options{})
//	sc, err := store.Create(ctx, "", schedule.Spec{
//		Expr:     "0 9 * * 1-5", // 09:00 on weekdays
//		TimeZone: "Europe/Paris",
//		Prompt:   "Summarise yesterday's tickets.",
//		Session:  "reports", // or empty: a fresh session per run
//	}, "cli")
//
// The package knows nothing of actors: a scheduler (the actors package's
// scheduler service, which `agcore serve` runs) reads the schedules,
// arms a timer on its clock, and at each fire time asks Decide what to do
// and journals it here before anything runs.
//
// # Schedules
//
// A Spec holds a cron expression (five fields, or a descriptor such as
// @daily or "@every 10m") read in a time zone (UTC by default), a prompt,
// an agent profile, a target (one named session whose history
// accumulates, or a fresh session per run), an optional end date and
// maximum number of runs, a missed-run policy (skip, or run-once after a
// downtime) and an overlap policy (skip, or queue a fire while the
// previous run goes on). Spec.Validate refuses a bad field with a
// *FieldError that names it.
//
// # Durability
//
// Every change is one Badger transaction, synced before the call returns,
// that also appends an Event to the schedule's journal: created, changed,
// deleted, fired, queued, started, finished, skipped, ended. Store.Fire
// journals a fire, with its id, the session it runs in and the turn id it
// is submitted with, together with the schedule's next fire time and run
// count, before the run starts. A process killed after that finds the
// fire in Store.Pending when it starts again and submits it again with the
// same turn id, which the session recognises: the prompt runs once, never
// twice, and a fire time that passed is not fired again.
//
// # Tools
//
// Tools and RegisterTools give agents schedule_create, schedule_list and
// schedule_delete (source toolsys.SourceSchedule), bounded by ToolsConfig.
package schedule
