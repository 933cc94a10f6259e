package schedule_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

func ExampleStore_Create() {
	mem, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer mem.Close()
	now := time.Date(2030, 1, 7, 12, 0, 0, 0, time.UTC) // a Monday, at noon
	store := schedule.New(mem, schedule.Options{Clock: func() time.Time { return now }})

	sc, err := store.Create(context.Background(), "standup", schedule.Spec{
		Expr:     "0 9 * * 1-5", // 09:00 on weekdays
		TimeZone: "UTC",
		Prompt:   "Summarise yesterday's tickets.",
		Session:  "reports",
		MaxRuns:  20,
	}, "cli")
	if err != nil {
		panic(err)
	}
	fmt.Println(sc.ID, sc.State, sc.NextFire.Format(time.RFC3339))

	_, err = store.Create(context.Background(), "", schedule.Spec{Expr: "0 9 * * 8", Prompt: "p"}, "cli")
	fmt.Println(err)
	// Output:
	// standup active 2030-01-08T09:00:00Z
	// schedule: expr: "0 9 * * 8": end of range (8) above maximum (6): 8
}
