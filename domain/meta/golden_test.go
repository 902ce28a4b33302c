package meta_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/meta/metatest"
)

// memTarget applies entries to a MemKV through meta.Step.
type memTarget struct{ kv *meta.MemKV }

func (m *memTarget) ApplyBatch(first uint64, envs []meta.Envelope) ([]meta.Result, error) {
	results := make([]meta.Result, 0, len(envs))
	for i, env := range envs {
		res, ms, err := meta.Step(m.kv, first+uint64(i), env, meta.JournalKeep)
		if err != nil {
			return nil, err
		}
		if err := meta.WriteMutations(m.kv, ms); err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

func (m *memTarget) Reader() meta.KVReader { return m.kv }

// Ensure that the pure apply rules give the outputs the golden scripts hold.
func TestGolden(t *testing.T) {
	t.Parallel()
	metatest.Run(t, "testdata", func(*testing.T) metatest.Target { return &memTarget{kv: meta.NewMemKV()} })
}
