package main

// How the CLI answers the values an install or update asks for
// (internal/registry/install builds the entry): --var, --values-stdin, an
// update's kept values, then a prompt on the terminal (secret ones typed
// unseen) or the lines of standard input.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/install"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
)

// installInput gathers the values an install asks for.
type installInput struct {
	flags *installFlags
	input *secretInput
	in    install.Input
}

// newInstallInput returns the input of an install or update, --var and
// --values-stdin read.
func newInstallInput(cmd *cobra.Command, f *installFlags) (*installInput, error) {
	ii := &installInput{flags: f, input: newSecretInput(cmd), in: install.Input{Plain: map[string]string{}, List: f.listValues}}
	ii.in.Ask = ii.ask
	ii.in.Stored = storedSecret
	for _, v := range f.vars {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--var %q: want NAME=VALUE", v)
		}
		ii.in.Plain[k] = val
	}
	if f.valuesStdin {
		// One JSON object rather than lines in the order asked: the
		// program that sends them need not know that order, and a value
		// may hold a line break.
		data, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
		if err != nil {
			return nil, fmt.Errorf("--values-stdin: %w", err)
		}
		if err := json.Unmarshal(data, &ii.in.Given); err != nil {
			return nil, fmt.Errorf("--values-stdin: want one JSON object of names to string values: %w", err)
		}
	}
	return ii, nil
}

// storedSecret is install.Input.Stored: the secret store's value of name.
func storedSecret(ctx context.Context, name string) (string, bool, error) {
	store, err := openSecrets()
	if err != nil {
		return "", false, err
	}
	v, err := store.Get(ctx, name)
	if errors.Is(err, secretstore.ErrNotFound) {
		return "", false, nil
	}
	return v, err == nil, err
}

// build builds the entry of srv (its name set) to run s, installed from
// the registry at registryURL; nothing is saved.
func (ii *installInput) build(ctx context.Context, srv config.Server, s *registry.Server, registryURL, runs string) (*install.Plan, error) {
	plan, err := install.Build(ctx, srv, s, registryURL, runs, &ii.in)
	if pe := (*install.PlainSecretError)(nil); errors.As(err, &pe) {
		n := termtext.Escape(pe.Name)
		return nil, fmt.Errorf("--var %s: %s is a secret; type it when asked (or give it on standard input), not on the command line", n, n)
	}
	return plan, err
}

// ask answers a required value nothing gave: its default with --yes, else
// typed after a prompt on the terminal (a secret unseen), or the next line
// of standard input.
func (ii *installInput) ask(ctx context.Context, v install.Value) (string, error) {
	if ii.flags.yes {
		if v.Default != "" && !v.Secret {
			return v.Default, nil
		}
		hint := ""
		if v.Secret {
			hint = " (a secret: leave out --yes and type it)"
		}
		return "", fmt.Errorf("%s is required: give it with --var %s=VALUE%s", termtext.Escape(v.Name), termtext.Escape(v.Name), hint)
	}
	prompt := termtext.Escape(v.Name)
	if v.Description != "" {
		prompt += " (" + termtext.Escape(v.Description) + ")"
	}
	if v.Default != "" {
		prompt += " [" + termtext.Escape(v.Default) + "]"
	}
	var answer string
	var err error
	if v.Secret {
		answer, err = ii.input.read(ctx, prompt+", not shown: ")
	} else {
		if ii.input.tty {
			fmt.Fprint(ii.input.prompt, prompt+": ")
		}
		answer, err = ii.input.line()
	}
	if errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s is required: nothing was typed for it (give it with --var %s=VALUE)", termtext.Escape(v.Name), termtext.Escape(v.Name))
	}
	return answer, err
}
