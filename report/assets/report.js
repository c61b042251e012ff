// wdext report: tooltips (flame boxes name their frame and script, treemap
// cells their class), the WPT report's filters. No network, no libraries.
(function () {
  "use strict";
  const tip = document.getElementById("tip");
  const framesOf = new WeakMap();
  function frames(section) {
    if (!framesOf.has(section)) framesOf.set(section, JSON.parse(section.dataset.frames || "[]"));
    return framesOf.get(section);
  }
  function line(cls, text) {
    const d = document.createElement("div");
    d.className = cls;
    d.textContent = text;
    tip.appendChild(d);
  }
  function show(el) {
    tip.textContent = "";
    if (el.dataset.f !== undefined) {
      const f = frames(el.closest("[data-frames]"))[+el.dataset.f] || [];
      line("t", f[0] || "(anonymous)");
      line("u", f[1] ? f[1] + (f[2] != null ? ":" + f[2] + (f[3] != null ? ":" + f[3] : "") : "") : "no script (native or builtin)");
      line("", el.dataset.ms + " · " + el.dataset.n + " sample" + (el.dataset.n === "1" ? "" : "s"));
    } else {
      line("t", el.dataset.tip);
    }
    tip.hidden = false;
  }
  document.addEventListener("mouseover", (e) => {
    const el = e.target.closest && e.target.closest("[data-f],[data-tip]");
    if (el) show(el);
    else tip.hidden = true;
  });
  document.addEventListener("mousemove", (e) => {
    if (tip.hidden) return;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(e.clientX + 14, innerWidth - w - 8) + "px";
    tip.style.top = (e.clientY + 16 + h > innerHeight ? e.clientY - h - 10 : e.clientY + 16) + "px";
  });
  // WPT: show all tests, the unexpected ones, or those with attachments.
  for (const bar of document.querySelectorAll(".filters")) {
    bar.addEventListener("click", (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      for (const o of bar.querySelectorAll("button")) o.setAttribute("aria-pressed", String(o === b));
      for (const t of document.querySelectorAll(".test")) {
        t.hidden = b.dataset.show !== "all" && !t.classList.contains(b.dataset.show);
      }
    });
  }
  document.documentElement.dataset.ready = "1";
})();
