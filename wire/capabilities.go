package wire

// StackSamplesCapability is wdext's new-session capability (in
// alwaysMatch, a boolean) for page-side forced samples that carry the
// caller's stack, as WPT RFC 81's synchronous test_driver.force_sample()
// wants, at the cost of exact counts (docs/forcesample.md, "Stack
// samples"). Drivers ignore it, as they ignore any vendor's capability.
const StackSamplesCapability = "wdext:stackSamples"

// SampledHereSymbol is the Symbol.for key a page sets to true on its
// global once it has sampled its own profilers, synchronously, in a
// stack-samples session: the Force Sample command it sends next skips
// that page's heap (and clears the mark), so each profiler still gets
// one sample.
const SampledHereSymbol = "wdext.forcesample.sampledHere"
