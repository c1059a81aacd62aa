package otelset

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

type key struct{ a, b string }

func TestCacheMakesEachSetOnce(t *testing.T) {
	var c Cache[key]
	made := 0
	get := func(k key) attribute.Set {
		o := c.Get(k, func() []attribute.KeyValue {
			made++
			return []attribute.KeyValue{attribute.String("b", k.b), attribute.String("a", k.a)}
		})
		return metric.NewAddConfig([]metric.AddOption{o}).Attributes()
	}
	s1 := get(key{"x", "y"})
	s2 := get(key{"x", "y"})
	s3 := get(key{"x", "z"})
	if made != 2 {
		t.Errorf("attrs called %d times for 2 distinct keys, want 2", made)
	}
	if !s1.Equals(&s2) || s1.Equals(&s3) {
		t.Errorf("sets: %v %v %v", s1.ToSlice(), s2.ToSlice(), s3.ToSlice())
	}
	if v, _ := s3.Value("b"); v.AsString() != "z" || s3.Len() != 2 {
		t.Errorf("set of {x z}: %v", s3.ToSlice())
	}
}

func TestCacheBounded(t *testing.T) {
	var c Cache[int]
	for i := range maxSets + 10 {
		c.Get(i, func() []attribute.KeyValue { return []attribute.KeyValue{attribute.Int("i", i)} })
	}
	if n := len(c.m); n != maxSets {
		t.Errorf("cache holds %d sets, want %d", n, maxSets)
	}
	// Past the bound a set is still right, only not kept.
	o := c.Get(maxSets+20, func() []attribute.KeyValue { return []attribute.KeyValue{attribute.Int("i", maxSets+20)} })
	s := metric.NewAddConfig([]metric.AddOption{o}).Attributes()
	if v, _ := s.Value("i"); v.AsInt64() != maxSets+20 {
		t.Errorf("set past the bound: %v", s.ToSlice())
	}
}
