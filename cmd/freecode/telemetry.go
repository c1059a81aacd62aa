package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/telemetry"
)

func init() { subcommands = append(subcommands, newTelemetryCmd) }

func newTelemetryCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "telemetry",
		Short: "OpenTelemetry export of tool calls: on with mcp.telemetry, OTEL_EXPORTER_OTLP_ENDPOINT or the managed settings",
	}
	var timeout time.Duration
	test := &cobra.Command{
		Use:   "test",
		Short: "Send one span, one metric and one event to the configured OTLP endpoint and say what happened",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			path, err := a.path()
			if err != nil {
				return err
			}
			s, err := telemetry.FromConfig(path, os.Getenv, nil)
			if err != nil {
				if !s.Enabled() {
					return err
				}
				// On all the same: the managed settings turn it on over
				// a config file whose block could not be read.
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", termtext.EscapeLines(err.Error()))
			}
			if !s.Enabled() {
				fmt.Fprintf(out, "telemetry is off: %s\n", s.Off)
				return nil
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			r, err := telemetry.Test(ctx, s, timeout)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "telemetry is on (%s), protocol %s\n", termtext.Escape(s.Source), s.Protocols())
			failed := false
			for _, sig := range []struct {
				name, url string
				err       error
			}{{"traces", s.TracesURL, r.Traces}, {"metrics", s.MetricsURL, r.Metrics}, {"logs", s.LogsURL, r.Logs}} {
				sig.url = termtext.Escape(telemetry.ShowURL(sig.url)) // a token in it as ***

				switch {
				case sig.url == "":
					fmt.Fprintf(out, "%-8s off\n", sig.name)
				case sig.err != nil:
					failed = true
					fmt.Fprintf(out, "%-8s %s: FAILED: %s\n", sig.name, sig.url, termtext.Escape(sig.err.Error()))
				default:
					fmt.Fprintf(out, "%-8s %s: OK\n", sig.name, sig.url)
				}
			}
			fmt.Fprintf(out, "%-8s %s\n", "content", argumentsLine(s))
			if failed {
				return exitError(1)
			}
			return nil
		},
	}
	test.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long each export may take")
	cmd.AddCommand(test)
	return cmd
}

// argumentsLine says whether calls' arguments and results are exported,
// and who asked for it.
func argumentsLine(s telemetry.Settings) string {
	if !s.Arguments {
		return "arguments and results not exported"
	}
	return "arguments and results exported, redacted (arguments: true in " + termtext.Escape(s.ArgumentsFrom) + ")"
}

// warnLogger logs warnings and errors to w.
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
