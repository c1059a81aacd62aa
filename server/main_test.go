package server_test

import (
	"testing"

	"github.com/freecode/freecode/server/servertest"
)

func TestMain(m *testing.M) { servertest.Main(m) }
