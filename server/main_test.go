package server_test

import (
	"testing"

	"github.com/freecode/freecode/server/servertest"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { servertest.Main(m) }
