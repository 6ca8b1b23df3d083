package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// A mutant is one small edit of one source file: the bytes [Start, End)
// replaced by Replacement.
type mutant struct {
	File        string // path as given to findMutants
	Line, Col   int    // position of Start: the report, the tests that reach it
	Start, End  int    // byte offsets into the original source
	Replacement string
	Description string // e.g. "Add → Sub", "< → <="
}

// key identifies a mutant of one version of a file, for the results cache.
func (m mutant) key(fileHash string) string {
	return fmt.Sprintf("%s@%s:%d-%d:%s", m.File, fileHash, m.Start, m.End, m.Replacement)
}

// apply returns src with the mutant's edit.
func (m mutant) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Replacement))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Replacement...)
	return append(out, src[m.End:]...)
}

// Binary operators and the one each is replaced by: the arithmetic,
// comparison-boundary, negated-comparison and logical mistakes.
var binarySwaps = map[token.Token]token.Token{
	token.ADD: token.SUB, token.SUB: token.ADD,
	token.MUL: token.QUO, token.QUO: token.MUL,
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LAND: token.LOR, token.LOR: token.LAND,
}

// GoMLX graph operations and the one each is replaced by: the same
// mistakes as binarySwaps, made in the graph the code builds, which Go's
// own operators never see.
var graphOpSwaps = map[string]string{
	"Add": "Sub", "Sub": "Add", "Mul": "Div", "Div": "Mul",
	"AddScalar": "SubScalar", "SubScalar": "AddScalar",
	"MulScalar": "DivScalar", "DivScalar": "MulScalar",
	"Max": "Min", "Min": "Max", "MaxScalar": "MinScalar", "MinScalar": "MaxScalar",
	"ReduceMax": "ReduceMin", "ReduceMin": "ReduceMax",
	"ReduceAllMax": "ReduceAllMin", "ReduceAllMin": "ReduceAllMax",
	"ReduceSum": "ReduceMean", "ReduceMean": "ReduceSum",
	"ReduceAllSum": "ReduceAllMean", "ReduceAllMean": "ReduceAllSum",
	"Exp": "Expm1", "Log": "Log1p",
	"LessThan": "LessOrEqual", "LessOrEqual": "LessThan",
	"GreaterThan": "GreaterOrEqual", "GreaterOrEqual": "GreaterThan",
	"LogicalAnd": "LogicalOr", "LogicalOr": "LogicalAnd",
}

// Graph operations of one operand that a mutant leaves out: a lost sign,
// a missing stop-gradient, a norm without its square root.
var droppableGraphOps = map[string]bool{
	"Neg": true, "StopGradient": true, "Sqrt": true, "Square": true,
	"Abs": true, "LogicalNot": true,
}

// graphPackage is the import path whose functions graphOpSwaps and
// droppableGraphOps name.
const graphPackage = "github.com/gomlx/gomlx/pkg/core/graph"

// findMutants parses one Go source file and returns its mutants at
// positions covered reports true for (nil: every position), in source
// order.
func findMutants(path string, src []byte, covered func(line, col int) bool) ([]mutant, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	graphName, graphDot := graphImport(file)
	var muts []mutant
	add := func(pos, end token.Pos, replacement, description string) {
		p := fset.Position(pos)
		if covered != nil && !covered(p.Line, p.Column) {
			return
		}
		muts = append(muts, mutant{File: path, Line: p.Line, Col: p.Column, Start: p.Offset,
			End: fset.Position(end).Offset, Replacement: replacement, Description: description})
	}
	text := func(n ast.Node) string {
		return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	// graphOp names the graph operation a call invokes, or "".
	graphOp := func(call *ast.CallExpr) (name string, nameNode ast.Node) {
		fun := call.Fun
		if index, ok := fun.(*ast.IndexExpr); ok { // MulScalar[float64](…)
			fun = index.X
		}
		switch f := fun.(type) {
		case *ast.Ident:
			if graphDot {
				return f.Name, f
			}
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); ok && graphName != "" && x.Name == graphName {
				return f.Sel.Name, f.Sel
			}
		}
		return "", nil
	}

	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			// Constants and imports: a changed constant is caught or not
			// wherever it is used; mutate the uses.
			return n.Tok != token.CONST && n.Tok != token.IMPORT
		case *ast.BinaryExpr:
			if to, ok := binarySwaps[n.Op]; ok && !isStringConcat(n) {
				add(n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), to.String(), fmt.Sprintf("%s → %s", n.Op, to))
			}
		case *ast.UnaryExpr:
			if n.Op == token.SUB || n.Op == token.NOT {
				add(n.Pos(), n.End(), "("+text(n.X)+")", fmt.Sprintf("%s%s → %s", n.Op, text(n.X), text(n.X)))
			}
		case *ast.BasicLit:
			if n.Kind == token.FLOAT {
				add(n.Pos(), n.End(), "(2*"+n.Value+")", fmt.Sprintf("%s → 2×%s", n.Value, n.Value))
			}
		case *ast.CallExpr:
			name, nameNode := graphOp(n)
			if to, ok := graphOpSwaps[name]; ok {
				add(nameNode.Pos(), nameNode.End(), to, fmt.Sprintf("%s → %s", name, to))
			}
			if droppableGraphOps[name] && len(n.Args) == 1 {
				add(n.Pos(), n.End(), "("+text(n.Args[0])+")", fmt.Sprintf("%s(x) → x", name))
			}
			if name == "Where" && len(n.Args) == 3 {
				add(n.Pos(), n.End(), fmt.Sprintf("%s(%s, %s, %s)", text(n.Fun), text(n.Args[0]), text(n.Args[2]), text(n.Args[1])),
					"Where(c, a, b) → Where(c, b, a)")
			}
		}
		return true
	})
	sort.SliceStable(muts, func(i, j int) bool { return muts[i].Start < muts[j].Start })
	return muts, nil
}

// graphImport returns the name under which file imports GoMLX's graph
// package, or dot = true for a dot import.
func graphImport(file *ast.File) (name string, dot bool) {
	for _, imp := range file.Imports {
		if strings.Trim(imp.Path.Value, `"`) != graphPackage {
			continue
		}
		if imp.Name == nil {
			return "graph", false
		}
		if imp.Name.Name == "." {
			return "", true
		}
		return imp.Name.Name, false
	}
	return "", false
}

// isStringConcat reports a + whose operands are visibly strings (a string
// literal on either side): swapping it to - cannot compile.
func isStringConcat(e *ast.BinaryExpr) bool {
	if e.Op != token.ADD {
		return false
	}
	for _, side := range []ast.Expr{e.X, e.Y} {
		if lit, ok := side.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			return true
		}
		if inner, ok := side.(*ast.BinaryExpr); ok && isStringConcat(inner) {
			return true
		}
	}
	return false
}
