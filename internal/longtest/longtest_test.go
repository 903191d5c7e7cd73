package longtest

import "testing"

func TestEnabledFollowsTheVariable(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", false}, {"0", false}, {"1", true}, {"yes", true}} {
		t.Setenv(Env, tc.value)
		if got := Enabled(); got != tc.want {
			t.Errorf("%s=%q: Enabled() = %v, want %v", Env, tc.value, got, tc.want)
		}
		if got := Pick(1, 2); got != map[bool]int{false: 1, true: 2}[tc.want] {
			t.Errorf("%s=%q: Pick(1, 2) = %d", Env, tc.value, got)
		}
	}
}
