package serving

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/imagefile"
	"github.com/edlebm/edlebm/datasets/table"
)

// smallImages is an imageDecoder of 8×8 grey images, 3 a request.
type smallImages struct{}

func (smallImages) NewDecoder() *imagefile.Decoder { return imagefile.NewDecoder(8, 1) }
func (smallImages) ImageSize() int                 { return 64 }
func (smallImages) MaxImages() int                 { return 3 }

// FuzzDecodeUpload feeds arbitrary bodies and content types to the request
// decoder: it must never panic, and must either decode 1 to 3 images of
// 64 values with a name each, or refuse with a 4xx status.
func FuzzDecodeUpload(f *testing.F) {
	f.Add("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n"+pngHeader(8, 8)+"\r\n--x--\r\n")
	f.Add("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n--x--\r\n")
	f.Add("image/png", pngHeader(100000, 100000))
	f.Add("image/jpeg", "\xff\xd8\xff\xe0")
	f.Add("multipart/form-data", "")
	f.Add("text/plain; charset=\"", "x")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/score", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1<<16)
		u, err := decodeUpload(r, smallImages{})
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.code < 400 || re.code > 499 || re.msg == "" {
				t.Fatalf("refused with %v (%T), want a 4xx requestError", err, err)
			}
			return
		}
		if n := len(u.names); n < 1 || n > 3 || len(u.pixels) != 64*n {
			t.Fatalf("%d names and %d values", n, len(u.pixels))
		}
	})
}

// FuzzDecodeRows feeds arbitrary bodies to the rows' decoder: it must never
// panic, and must either decode 1 to 3 rows of 2 finite numbers or refuse
// with a 4xx status.
func FuzzDecodeRows(f *testing.F) {
	f.Add("application/json", `{"rows": [[1, 2], [3.5e2, -4]]}`)
	f.Add("application/json", `{"rows": [[1, null]]}`)
	f.Add("application/json", `{"rows": [[NaN, 1]]}`)
	f.Add("application/json", `{"rows": [[1e400, 1]]}`)
	f.Add("application/json; charset=utf-8", `{"rows": []} {}`)
	f.Add("text/csv", "1,2\n")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/score", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1<<16)
		values, n, err := decodeRows(r, 2, 3)
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.code < 400 || re.code > 499 || re.msg == "" {
				t.Fatalf("refused with %v (%T), want a 4xx requestError", err, err)
			}
			return
		}
		if n < 1 || n > 3 || len(values) != 2*n {
			t.Fatalf("%d rows and %d values", n, len(values))
		}
		for _, v := range values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("decoded %v", v)
			}
		}
	})
}

// FuzzDecodeTableRows feeds arbitrary bodies to the table rows' decoder,
// against a schema of a number and a category (a or b), strictly and with
// ?unseen=anomalous: it must never panic, and must either decode 1 to 3
// rows, each a finite number and a category the schema has (or, kept, a
// placeholder with the unseen word), or refuse with a 4xx status; a body
// the strict read takes is taken the same with unseen rows kept.
func FuzzDecodeTableRows(f *testing.F) {
	f.Add("application/json", `{"rows": [{"size": 1.5, "kind": "a"}, {"size": "2", "kind": "b", "id": 7}]}`)
	f.Add("application/json", `{"rows": [{"size": null, "kind": "a"}]}`)
	f.Add("application/json", `{"rows": [{"size": true, "kind": "c"}]}`)
	f.Add("text/csv", "kind,size\na,1\nb,2e3\n")
	f.Add("text/csv", "kind,size\nc,1\nb,2e3\n")
	f.Add("text/csv", "\xef\xbb\xbfsize,kind\n\"1\",\"a\"\n")
	f.Add("text/csv", "size,kind\n1\n")
	s := table.Schema{Columns: []table.Column{{Name: "size", Kind: table.Numeric}, {Name: "kind", Kind: table.Categorical, Categories: []string{"a", "b"}}}}
	decode := func(t *testing.T, path, contentType, body string) (*table.Table, error) {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1<<16)
		rows, err := decodeTableRows(r, s, 3)
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.code < 400 || re.code > 499 || re.msg == "" {
				t.Fatalf("%s: refused with %v (%T), want a 4xx requestError", path, err, err)
			}
			return nil, err
		}
		if rows.N < 1 || rows.N > 3 || len(rows.Numbers) != rows.N || len(rows.Codes) != rows.N {
			t.Fatalf("%s: %d rows, %d numbers, %d codes", path, rows.N, len(rows.Numbers), len(rows.Codes))
		}
		for i := range rows.N {
			unseen := rows.Unseen != nil && rows.Unseen[i] != nil
			if v := rows.Numbers[i]; math.IsNaN(v) || math.IsInf(v, 0) || rows.Codes[i] < 0 || rows.Codes[i] > 1 || unseen && (rows.Codes[i] != 0 || len(rows.Unseen[i]) != 1) {
				t.Fatalf("%s: row %d: %v, code %d, unseen %v", path, i+1, v, rows.Codes[i], rows.Unseen)
			}
		}
		return rows, nil
	}
	f.Fuzz(func(t *testing.T, contentType, body string) {
		strict, strictErr := decode(t, "/v1/score", contentType, body)
		kept, keptErr := decode(t, "/v1/score?unseen=anomalous", contentType, body)
		if strictErr == nil && (keptErr != nil || kept.N != strict.N || kept.Unseen != nil || !slices.Equal(kept.Codes, strict.Codes)) {
			t.Fatalf("taken strictly, but with unseen rows kept: %v, %v", keptErr, kept)
		}
	})
}
