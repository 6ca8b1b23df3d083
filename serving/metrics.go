package serving

import (
	"fmt"
	"strconv"
	"time"

	"github.com/edlebm/edlebm/densityrun"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the service's Prometheus metrics, in a registry of its own
// (with the Go runtime's and the process's collectors).
type metrics struct {
	registry     *prometheus.Registry
	requests     *prometheus.CounterVec   // by route and status code
	latency      *prometheus.HistogramVec // by route
	inFlight     prometheus.Gauge
	batchRows    *prometheus.HistogramVec // by operation
	batchSeconds *prometheus.HistogramVec // by operation and compiled size
	images       *prometheus.CounterVec   // by operation
	errors       *prometheus.CounterVec   // by kind
	tableRows    *prometheus.CounterVec   // by outcome: scored, flagged, unseen
	unseen       *prometheus.CounterVec   // table rows' unseen categories, by column
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edlebm_http_requests_total",
			Help: "HTTP requests answered, by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edlebm_http_request_duration_seconds",
			Help: "Time from a request's headers to its answer, by route.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edlebm_http_requests_in_flight",
			Help: "Requests being answered now."}),
		batchRows: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edlebm_batch_rows",
			Help: "Images in each batch the model computed, by operation.", Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}}, []string{"op"}),
		batchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edlebm_batch_duration_seconds",
			Help: "Time the model took for a batch, by operation and compiled batch size.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"op", "size"}),
		images: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edlebm_images_total",
			Help: "Images computed, by operation."}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edlebm_errors_total",
			Help: "Requests refused or failed, by kind: auth, decode, limit, model, overload."}, []string{"kind"}),
		tableRows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edlebm_table_rows_total",
			Help: fmt.Sprintf("Table rows answered, by outcome: scored (every row), flagged (p-value at most %g), unseen (a category training never saw).", densityrun.FlagLevel)}, []string{"outcome"}),
		unseen: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edlebm_table_unseen_categories_total",
			Help: "Categories training never saw in the table rows answered (?unseen=anomalous), by column."}, []string{"column"}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.inFlight, m.batchRows, m.batchSeconds, m.images, m.errors, m.tableRows, m.unseen,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeTableRows counts a table answer's rows by outcome (a drift the
// p-values and unseen categories show before anyone reads the answers).
func (m *metrics) observeTableRows(a TableAnswer) {
	for _, r := range a.Rows {
		m.tableRows.WithLabelValues("scored").Inc()
		if r.PValue <= densityrun.FlagLevel {
			m.tableRows.WithLabelValues("flagged").Inc()
		}
		if r.Unseen != nil {
			m.tableRows.WithLabelValues("unseen").Inc()
		}
		for column := range r.Unseen {
			m.unseen.WithLabelValues(column).Inc()
		}
	}
}

// observeBatch records one batch of the model.
func (m *metrics) observeBatch(op string, rows, size int, took time.Duration, err error) {
	if err != nil {
		m.errors.WithLabelValues("model").Inc()
		return
	}
	m.batchRows.WithLabelValues(op).Observe(float64(rows))
	m.batchSeconds.WithLabelValues(op, strconv.Itoa(size)).Observe(took.Seconds())
	m.images.WithLabelValues(op).Add(float64(rows))
}
