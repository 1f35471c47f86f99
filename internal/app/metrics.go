package app

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cairn-dev/cairn/internal/engine"
)

// engineMetrics are the engine's histograms: operations by kind and outcome, and provider
// calls by step kind, resource type and outcome.
type engineMetrics struct {
	ops, steps *prometheus.HistogramVec
}

var _ engine.Observer = (*engineMetrics)(nil)

// durations spans a fast provider call to an operation of many minutes.
var durations = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800}

// newMetrics makes the registry /metrics serves: the Go runtime's and the process's
// collectors, the engine's histograms, and cairn_replica_info naming this replica.
func newMetrics(replica, database string) (*prometheus.Registry, *engineMetrics) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &engineMetrics{
		ops: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cairn_operation_duration_seconds",
			Help:    "Operations this replica ran to their end, by kind (deploy, delete, ...) and status.",
			Buckets: durations,
		}, []string{"kind", "status"}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cairn_provider_call_duration_seconds",
			Help:    "Provider calls of resource steps, by step kind (create, update, delete, ...), resource type and result.",
			Buckets: durations,
		}, []string{"kind", "type", "result"}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "cairn_replica_info",
		Help:        "Always 1: names this replica (as in operation leases) and its state backend.",
		ConstLabels: prometheus.Labels{"replica": replica, "database": database},
	})
	info.Set(1)
	reg.MustRegister(m.ops, m.steps, info)
	return reg, m
}

func (m *engineMetrics) StepDone(kind, typ string, d time.Duration, failed bool) {
	if strings.HasPrefix(typ, "Custom::") {
		typ = "Custom::*" // any deployer may name one: not a label value of its own
	}
	result := "ok"
	if failed {
		result = "failed"
	}
	m.steps.WithLabelValues(kind, typ, result).Observe(d.Seconds())
}

func (m *engineMetrics) OperationDone(kind, status string, d time.Duration) {
	m.ops.WithLabelValues(kind, status).Observe(d.Seconds())
}
