// Command report reads peer results (one JSON object per line, from the
// files named or standard input) and prints markdown tables of their
// medians relative to a baseline peer.
//
//	report -baseline bare -against agcore-runtime=bare-stream -order bare,eino-react results.jsonl
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/report"
)

func main() {
	baseline := flag.String("baseline", "bare", "peer every ratio is relative to")
	against := flag.String("against", "", "comma-separated peer=baseline overrides")
	order := flag.String("order", "", "comma-separated peers, in the order of the rows")
	flag.Parse()
	if err := run(*baseline, *against, *order, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(baseline, against, order string, files []string) error {
	o := report.Options{Baseline: baseline, Against: map[string]string{}}
	if order != "" {
		o.Order = strings.Split(order, ",")
	}
	for _, pair := range strings.Split(against, ",") {
		if pair == "" {
			continue
		}
		peer, base, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("-against %q: want peer=baseline", pair)
		}
		o.Against[peer] = base
	}
	var results []harness.Result
	read := func(r io.Reader) error {
		rs, err := report.Read(r)
		results = append(results, rs...)
		return err
	}
	if len(files) == 0 {
		if err := read(os.Stdin); err != nil {
			return err
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = read(f)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	return report.Write(os.Stdout, report.Summarise(results), o)
}
