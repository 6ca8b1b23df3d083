// Package scopes answers questions about GoMLX context scope paths.
package scopes

import (
	"strings"

	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Within reports whether a variable in scope variableScope belongs to scope
// or one of its sub-scopes: "/a/b" is within "/a" and "/a/", "/ab" is not.
func Within(variableScope, scope string) bool {
	scope = strings.TrimSuffix(scope, context.ScopeSeparator)
	return variableScope == scope || strings.HasPrefix(variableScope, scope+context.ScopeSeparator)
}
