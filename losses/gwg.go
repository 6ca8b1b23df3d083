package losses

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// GibbsWithGradients runs steps Metropolis–Hastings steps of "Gibbs with
// gradients" (Grathwohl et al. 2021, "Oops I took a gradient", algorithm 1)
// on the binary vectors x [B, D] (values 0 and 1), targeting
// p(x) ∝ exp(−E(x)). Each step proposes to flip one bit, chosen with
// probability q(i | x) = softmax(d(x)/2)ᵢ, where dᵢ(x) = (2xᵢ − 1)·∂E/∂xᵢ is
// the first-order estimate of log p(x with bit i flipped) − log p(x), and
// accepts the flip x → x' with probability
// min(1, exp(E(x) − E(x'))·q(i | x')/q(i | x)), which keeps p invariant.
// One energy and gradient evaluation per step, where a Gibbs sweep needs
// 2D energies: on images (D = 784) this is what makes contrastive
// divergence affordable.
//
// It returns the new states and the fraction of proposals accepted over
// all steps and chains. No gradient flows through the chain.
func GibbsWithGradients(ctx *context.Context, energy EnergyFn, x *Node, steps int) (next, acceptance *Node) {
	if x.Rank() != 2 {
		panicf("losses: Gibbs with gradients over x of shape %s; want [batch, bits]", x.Shape())
	}
	if steps < 1 {
		panicf("losses: Gibbs with gradients for %d steps; want at least 1", steps)
	}
	g, d := x.Graph(), x.Shape().Dimensions[1]
	e, logQ := flipProposal(energy, x)
	accepted := ScalarZero(g, x.DType())
	for range steps {
		// The flipped bit: a draw from softmax(logits) by the Gumbel-max trick.
		u := ctx.RandomUniform(g, logQ.Shape())
		gumbel := Neg(Log(Neg(Log(u))))
		flip := OneHot(ArgMax(Add(logQ, gumbel), 1), d, x.DType())
		proposal := Add(x, Mul(flip, OneMinus(MulScalar(x, 2))))
		eNew, logQNew := flipProposal(energy, proposal)
		// q(i | x') of the reverse move flips the same bit i back.
		logRatio := Add(Sub(e, eNew), ReduceSum(Mul(flip, Sub(logQNew, logQ)), 1))
		accept := LessThan(Log(ctx.RandomUniform(g, logRatio.Shape())), logRatio)
		x = Where(accept, proposal, x)
		e = Where(accept, eNew, e)
		logQ = Where(accept, logQNew, logQ)
		accepted = Add(accepted, ReduceAllSum(ConvertDType(accept, x.DType())))
	}
	b := x.Shape().Dimensions[0]
	return StopGradient(x), StopGradient(DivScalar(accepted, float64(b*steps)))
}

// flipProposal returns the energies E(x) [B] and the log-probabilities
// log q(· | x) [B, D] of Gibbs with gradients' proposal.
func flipProposal(energy EnergyFn, x *Node) (e, logQ *Node) {
	e, grad := EnergyGradient(energy, x)
	d := Mul(AddScalar(MulScalar(x, 2), -1), grad)
	return e, LogSoftmax(DivScalar(d, 2), 1)
}
