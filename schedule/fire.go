package schedule

// This file holds Fire, one run of a schedule, and Event, an entry of a
// schedule's journal.

import "time"

// FireStatus is where a fire stands.
type FireStatus string

// The statuses of a fire.
const (
	// FireQueued fires wait for the run before them (OverlapQueue).
	FireQueued FireStatus = "queued"
	// FireRunning fires have been handed to their session, or are about
	// to be: a running fire the process did not finish is resumed, with
	// its turn id, when the scheduler starts again.
	FireRunning FireStatus = "running"
	// FireFinished fires have ended; Outcome says how.
	FireFinished FireStatus = "finished"
)

// Fire is one run of a schedule, journaled before the run starts.
type Fire struct {
	// ID is "<schedule id>-<N>".
	ID       string `json:"id"`
	Schedule string `json:"schedule"`
	// N numbers the schedule's fires from 1.
	N int `json:"n"`
	// Due is the fire time the fire stands for; FiredAt is when the
	// scheduler fired it (later than Due after a downtime, or a queue).
	Due     time.Time `json:"due"`
	FiredAt time.Time `json:"fired_at"`
	// Session is the session the run is submitted to, and TurnID the turn
	// id it is submitted with, so that a resumed fire is not run twice.
	Session string `json:"session"`
	TurnID  string `json:"turn_id"`
	// Prompt and Agent are the schedule's when it fired.
	Prompt string     `json:"prompt"`
	Agent  string     `json:"agent,omitempty"`
	Status FireStatus `json:"status"`
	// StartedAt is when a queued fire started; zero for one that started
	// when it fired.
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Outcome is how the run's turn ended ("completed", "failed",
	// "cancelled", "limit"), or "error" when it could not be submitted.
	Outcome string `json:"outcome,omitempty"`
	// Reason explains an outcome other than completed.
	Reason string `json:"reason,omitempty"`
}

// EventType names what an Event records.
type EventType string

// The types of Event.
const (
	EventCreated  EventType = "created"
	EventChanged  EventType = "changed"
	EventDeleted  EventType = "deleted"
	EventFired    EventType = "fired"
	EventQueued   EventType = "queued"
	EventStarted  EventType = "started"
	EventFinished EventType = "finished"
	EventSkipped  EventType = "skipped"
	EventEnded    EventType = "ended"
)

// EventVersion is the version of the Event envelope.
const EventVersion = 1

// Event is an entry of a schedule's journal: written in the same
// transaction as the change it records.
type Event struct {
	// V is the envelope's version, EventVersion.
	V   int    `json:"v"`
	Seq uint64 `json:"seq"`
	// Time is the scheduler's (or the caller's) clock at the change.
	Time     time.Time `json:"time"`
	Type     EventType `json:"type"`
	Schedule string    `json:"schedule"`
	// Fire names the fire of fired, queued, started, finished and (for a
	// due time dropped) skipped events.
	Fire string `json:"fire,omitempty"`
	// Due is the fire time of fired, queued and skipped events.
	Due time.Time `json:"due,omitzero"`
	// Outcome is a finished fire's.
	Outcome string `json:"outcome,omitempty"`
	// Reason explains skipped, ended and unsuccessful finished events.
	Reason string `json:"reason,omitempty"`
	// Spec is the schedule's Spec in created and changed events.
	Spec *Spec `json:"spec,omitempty"`
}
