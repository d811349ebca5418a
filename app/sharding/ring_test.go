package sharding

import (
	"fmt"
	"testing"
)

func namespaces(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tenant-%d", i)
	}
	return out
}

func shares(members, keys []string) map[string]int {
	out := map[string]int{}
	for _, k := range keys {
		out[Owner(members, k)]++
	}
	return out
}

func TestOwnerSpreadsEvenly(t *testing.T) {
	keys := namespaces(1000)
	for _, n := range []int{2, 3, 4, 5, 8} {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf("eso-shard-eso-%d-1a2b3c4d", i))
		}
		for m, got := range shares(Members(members), keys) {
			want := 1000 / n
			// 5 points of the whole, as promised for three replicas.
			if d := got - want; d > 50 || d < -50 {
				t.Errorf("%d members: %s owns %d of 1000 keys, want %d ± 50", n, m, got, want)
			}
		}
	}
}

func TestOwnerMovesFewestKeys(t *testing.T) {
	keys := namespaces(1000)
	three := Members([]string{"a", "b", "c"})
	tests := []struct {
		name  string
		after []string
		// moved returns whether a key may move from before to after.
		moved func(before, after string) bool
	}{
		{"a member joins: keys move only to it", []string{"a", "b", "c", "d"}, func(_, after string) bool { return after == "d" }},
		{"a member leaves: only its keys move", []string{"a", "c"}, func(before, _ string) bool { return before == "b" }},
		{"the same members in another order: nothing moves", []string{"c", "a", "b"}, func(string, string) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := tt.after // as given: Owner must not depend on the order
			moves := 0
			for _, k := range keys {
				b, a := Owner(three, k), Owner(after, k)
				if b != a {
					moves++
					if !tt.moved(b, a) {
						t.Fatalf("%s moved from %s to %s", k, b, a)
					}
				}
			}
			if len(after) == 4 && (moves < 200 || moves > 300) {
				t.Errorf("a fourth member took %d of 1000 keys, want about 250", moves)
			}
		})
	}
}

func TestKeySeparatesClusterNamesFromNamespaces(t *testing.T) {
	if Key("prod", "x") != "prod" || Key("", "prod") != "/prod" {
		t.Fatalf("Key: %q %q", Key("prod", "x"), Key("", "prod"))
	}
	if Owner(nil, "x") != "" {
		t.Fatal("no members own nothing")
	}
}

func TestAssignment(t *testing.T) {
	ab := Members([]string{"a", "b"})
	abc := Members([]string{"a", "b", "c"})
	ac := Members([]string{"a", "c"})
	keys := namespaces(300)
	tests := []struct {
		name string
		a    Assignment
		// want reports whether the replica should work a key.
		want func(k string) bool
	}{
		{"no member ID works nothing", Assignment{Claim: ab}, func(string) bool { return false }},
		{"alone, with an empty claim, works nothing", Assignment{Self: "a"}, func(string) bool { return false }},
		{"alone works everything", Assignment{Self: "a", Claim: []string{"a"}}, func(string) bool { return true }},
		{"works its share when the others claim theirs",
			Assignment{Self: "a", Claim: ab, Others: map[string][]string{"b": ab}},
			func(k string) bool { return Owner(ab, k) == "a" }},
		{"waits for keys another member still claims",
			Assignment{Self: "a", Claim: ab, Others: map[string][]string{"b": {"b"}}},
			func(string) bool { return false }},
		{"a member still on an older ring blocks only what it claims",
			Assignment{Self: "a", Claim: abc, Others: map[string][]string{"b": abc, "c": ac}},
			func(k string) bool { return Owner(abc, k) == "a" && Owner(ac, k) != "c" }},
		{"moving to a new ring works only what both give it",
			Assignment{Self: "a", Claim: ab, Others: map[string][]string{"b": ab}, Next: abc},
			func(k string) bool { return Owner(ab, k) == "a" && Owner(abc, k) == "a" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range keys {
				if got := tt.a.Works(k); got != tt.want(k) {
					t.Fatalf("Works(%s) = %v", k, got)
				}
			}
		})
	}
}
