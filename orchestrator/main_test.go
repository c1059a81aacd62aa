package orchestrator

import (
	"testing"

	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
