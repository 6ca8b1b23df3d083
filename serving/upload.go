package serving

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/edlebm/edlebm/datasets/imagefile"
)

// requestError is a refused request: its status code and why.
type requestError struct {
	code int
	msg  string
}

func (e *requestError) Error() string { return e.msg }

func refused(code int, format string, args ...any) error {
	return &requestError{code, fmt.Sprintf(format, args...)}
}

// upload is a request's images, decoded.
type upload struct {
	names  []string
	pixels []float32
}

// imageDecoder is what decodeUpload needs of a model.
type imageDecoder interface {
	NewDecoder() *imagefile.Decoder
	ImageSize() int
	MaxImages() int
}

// decodeUpload reads the images of a request: the file parts of a
// multipart/form-data body, or one PNG or JPEG as the whole body. Each is
// decoded as score-images decodes a file (imagefile.Decoder: its header
// checked against the bounds first). The errors say what was wrong with
// which file, with the status code to answer.
func decodeUpload(r *http.Request, model imageDecoder) (upload, error) {
	var u upload
	d := model.NewDecoder()
	add := func(name string, body io.Reader) error {
		if len(u.names) == model.MaxImages() {
			return refused(http.StatusRequestEntityTooLarge, "more than %d images in one request: send them in several", model.MaxImages())
		}
		// Read whole first: a body cut short is the request's fault (400),
		// a file that does not decode the image's (422).
		file, err := io.ReadAll(body)
		if tooLarge(err) {
			return bodyTooLarge(err)
		} else if err != nil {
			return refused(http.StatusBadRequest, "malformed body (file %q): %v", name, err)
		}
		at := len(u.pixels)
		u.pixels = append(u.pixels, make([]float32, model.ImageSize())...)
		if err := d.Decode(bytes.NewReader(file), u.pixels[at:]); err != nil {
			return refused(http.StatusUnprocessableEntity, "image %q: %v", name, err)
		}
		u.names = append(u.names, name)
		return nil
	}
	switch mediaType(r) {
	case "image/png", "image/jpeg", "application/octet-stream":
		if err := add("body", r.Body); err != nil {
			return u, err
		}
	case "multipart/form-data":
		mr, err := r.MultipartReader()
		if err != nil {
			return u, refused(http.StatusBadRequest, "malformed multipart body: %v", err)
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				if tooLarge(err) {
					return u, bodyTooLarge(err)
				}
				return u, refused(http.StatusBadRequest, "malformed multipart body: %v", err)
			}
			if part.FileName() == "" { // a form field, not a file
				part.Close()
				continue
			}
			err = add(part.FileName(), part)
			part.Close()
			if err != nil {
				return u, err
			}
		}
	default:
		return u, refused(http.StatusUnsupportedMediaType, "content type %q: want multipart/form-data with image files, or one image/png or image/jpeg body", r.Header.Get("Content-Type"))
	}
	if len(u.names) == 0 {
		return u, refused(http.StatusBadRequest, "no image in the request: send multipart/form-data with one or more image files")
	}
	return u, nil
}

func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

func bodyTooLarge(err error) error {
	var mb *http.MaxBytesError
	errors.As(err, &mb)
	return refused(http.StatusRequestEntityTooLarge, "request body over the limit of %d bytes", mb.Limit)
}
