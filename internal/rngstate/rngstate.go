// Package rngstate runs work on a GoMLX context — pictures, evaluations —
// without moving the context's random stream, so that training draws the
// same numbers whatever was drawn in between.
package rngstate

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Aside runs fn and then puts ctx's random number generator state back
// where it was. A context without a stream yet is left to fn, which
// starts one as training would.
func Aside(ctx *context.Context, fn func() error) (err error) {
	v := ctx.GetVariableByScopeAndName(context.RootScope, context.RNGStateVariableName)
	if v == nil || !v.HasValue() {
		return fn()
	}
	state, err := v.MustValue().LocalClone()
	if err != nil {
		return fmt.Errorf("saving the context's random stream: %w", err)
	}
	defer func() {
		if restoreErr := v.SetValue(state); restoreErr != nil && err == nil {
			err = fmt.Errorf("restoring the context's random stream: %w", restoreErr)
		}
	}()
	return fn()
}
