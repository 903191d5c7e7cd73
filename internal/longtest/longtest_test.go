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
		for i := range 10 {
			if got, want := SampledOneIn(i, 3), tc.want || i%3 == 0; got != want {
				t.Errorf("%s=%q: SampledOneIn(%d, 3) = %v", Env, tc.value, i, got)
			}
			if got, want := Sampled(i), tc.want || i%4 == 0; got != want {
				t.Errorf("%s=%q: Sampled(%d) = %v", Env, tc.value, i, got)
			}
		}
	}
}
