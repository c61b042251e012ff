// Checks of a measureUserAgentSpecificMemory() result against the newer
// draft of the Measure Memory API.
const SCOPES = ["Window", "DedicatedWorkerGlobalScope", "SharedWorkerGlobalScope", "ServiceWorkerGlobalScope", "cross-origin-aggregated"];

function checkMeasurement(result) {
  assert_equals(typeof result.bytes, "number", "bytes");
  assert_true(Array.isArray(result.breakdown), "breakdown is a list");
  let sum = 0, empty = 0;
  for (const entry of result.breakdown) {
    assert_equals(typeof entry.bytes, "number", "entry bytes");
    assert_true(Array.isArray(entry.attribution), "attribution is a list");
    assert_true(Array.isArray(entry.types), "types is a list");
    sum += entry.bytes;
    if (entry.bytes === 0 && entry.attribution.length === 0 && entry.types.length === 0) empty++;
    for (const a of entry.attribution) {
      assert_in_array(a.scope, SCOPES, "scope");
      assert_equals(typeof a.url, "string", "url");
      assert_equals(a.url === "cross-origin-url", a.scope === "cross-origin-aggregated", "cross-origin-url goes with cross-origin-aggregated");
      if (a.container) {
        assert_equals(typeof a.container.id, "string", "container id");
        assert_equals(typeof a.container.src, "string", "container src");
      }
    }
  }
  assert_equals(sum, result.bytes, "total is the sum of the entries");
  assert_greater_than_equal(empty, 1, "the empty entry");
}

function attributions(result) {
  return result.breakdown.flatMap((e) => e.attribution.map((a) => Object.assign({ bytes: e.bytes }, a)));
}

function loadFrame(src, id) {
  const frame = document.createElement("iframe");
  frame.id = id;
  frame.src = src;
  const loaded = new Promise((resolve) => (frame.onload = resolve));
  document.body.appendChild(frame);
  return loaded.then(() => frame);
}
