package checkpoint

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// GoMLX's checkpoint files: BASE.json (metadata) beside BASE.bin (the
// variables' bytes, in metadata order), the .bin either raw or
// "gomlx_checkpoints" + a length byte + "gzip" + a gzip stream.
const (
	gomlxPrefix    = "checkpoint-"
	jsonSuffix     = ".json"
	binSuffix      = ".bin"
	binHeader      = "gomlx_checkpoints"
	gzipFormatName = "gzip"
	// maxMetadataBytes bounds the .json read: metadata is one small record
	// per variable and hyperparameter, kilobytes even for large models.
	maxMetadataBytes = 64 << 20
	// maxDeflateRatio is DEFLATE's largest expansion (≈ 1032:1), so a
	// gzip .bin can never hold more than this many times its size.
	maxDeflateRatio = 1100
	// globalStepName is the variable that counts training steps, which
	// every model reads back as a scalar int64.
	globalStepName = "var:/" + optimizers.GlobalStepVariableName
)

// metadata mirrors what GoMLX writes in a checkpoint's .json, read here
// before GoMLX sees it: GoMLX trusts it (a null document, an empty scope,
// a missing dtype or a negative dimension panic; declared sizes are
// allocated before they are checked against the .bin).
type metadata struct {
	Params []struct {
		Scope, Key, ValueType string
	}
	Variables []struct {
		ParameterName string
		Dimensions    []int64
		DType         string
		Pos, Length   int64
	}
	BinFormat string
}

// validate checks every GoMLX checkpoint in the folder path: the metadata
// names valid dtypes, absolute scopes and non-negative dimensions whose
// byte counts match Pos and Length, and the .bin holds exactly the
// declared bytes (a gzip .bin is inflated, streaming, no further than
// that). Errors name the file and the field.
func validate(path string) error {
	jsons, err := filepath.Glob(filepath.Join(path, gomlxPrefix+"*"+jsonSuffix))
	if err != nil {
		return err
	}
	if len(jsons) == 0 {
		return fmt.Errorf("no %s*%s metadata file in it", gomlxPrefix, jsonSuffix)
	}
	for _, j := range jsons {
		// Errors name the file alone: LoadPath's names the folder.
		total, err := validateMetadata(j)
		if err != nil {
			return err
		}
		if err := validateBin(strings.TrimSuffix(j, jsonSuffix)+binSuffix, total); err != nil {
			return err
		}
	}
	return nil
}

// validateMetadata checks one .json and returns the bytes its variables
// declare in all.
func validateMetadata(path string) (total int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	file := filepath.Base(path)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetadataBytes+1))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxMetadataBytes {
		return 0, fmt.Errorf("%s: metadata over %d MiB: not a checkpoint's", file, maxMetadataBytes>>20)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		return 0, fmt.Errorf("%s: metadata is not a JSON object", file)
	}
	var meta metadata
	if err := json.Unmarshal(data, &meta); err != nil {
		return 0, fmt.Errorf("%s: metadata: %w", file, err)
	}
	for i, p := range meta.Params {
		if !strings.HasPrefix(p.Scope, "/") || p.Key == "" || p.ValueType == "" {
			return 0, fmt.Errorf("%s: Params[%d] (scope %q, key %q, type %q): want an absolute scope, a key and a value type",
				file, i, p.Scope, p.Key, p.ValueType)
		}
	}
	for i, v := range meta.Variables {
		field := fmt.Sprintf("%s: Variables[%d] (%q)", file, i, v.ParameterName)
		if !strings.HasPrefix(v.ParameterName, "var:/") || strings.HasSuffix(v.ParameterName, "/") {
			return 0, fmt.Errorf("%s: ParameterName: want var:/SCOPE/NAME", field)
		}
		dtype, err := dtypes.DTypeString(v.DType)
		if err != nil || dtype == dtypes.InvalidDType || dtype.Size() == 0 {
			return 0, fmt.Errorf("%s: DType %q: not a dtype a checkpoint holds", field, v.DType)
		}
		size := int64(dtype.Size())
		for _, d := range v.Dimensions {
			if d < 0 {
				return 0, fmt.Errorf("%s: Dimensions %v: negative", field, v.Dimensions)
			}
			if d > 0 && size > math.MaxInt64/d {
				return 0, fmt.Errorf("%s: Dimensions %v: too large", field, v.Dimensions)
			}
			size *= d
		}
		if v.ParameterName == globalStepName && (dtype != dtypes.Int64 || len(v.Dimensions) != 0) {
			return 0, fmt.Errorf("%s: the global step is %s%v; want a scalar Int64, which GoMLX's optimizers read it as", field, v.DType, v.Dimensions)
		}
		if v.Length != size {
			return 0, fmt.Errorf("%s: Length %d bytes, but %s%v is %d", field, v.Length, v.DType, v.Dimensions, size)
		}
		if v.Pos != total {
			return 0, fmt.Errorf("%s: Pos %d, want %d (right after the variable before)", field, v.Pos, total)
		}
		if total > math.MaxInt64-size {
			return 0, fmt.Errorf("%s: sizes overflow", field)
		}
		total += size
	}
	return total, nil
}

// validateBin checks that file holds exactly total bytes of variables.
func validateBin(path string, total int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	file := filepath.Base(path)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	r := bufio.NewReader(f)
	header, err := r.Peek(len(binHeader))
	if err != nil || string(header) != binHeader {
		if info.Size() != total {
			return fmt.Errorf("%s: %d bytes, but the metadata declares %d", file, info.Size(), total)
		}
		return nil
	}
	if _, err := r.Discard(len(binHeader)); err != nil {
		return err
	}
	n, err := r.ReadByte()
	if err != nil {
		return fmt.Errorf("%s: truncated header", file)
	}
	format := make([]byte, n)
	if _, err := io.ReadFull(r, format); err != nil || string(format) != gzipFormatName {
		return fmt.Errorf("%s: compression %q: GoMLX writes only %q", file, format, gzipFormatName)
	}
	if total > maxDeflateRatio*info.Size() {
		return fmt.Errorf("%s: the metadata declares %d bytes, more than %d compressed bytes can hold", file, total, info.Size())
	}
	z, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer z.Close()
	inflated, err := io.Copy(io.Discard, io.LimitReader(z, total+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("compressed data cut short")
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	if inflated != total {
		more := ""
		if inflated > total {
			more = "more than "
		}
		return fmt.Errorf("%s: inflates to %s%d bytes, but the metadata declares %d", file, more, inflated, total)
	}
	return nil
}
