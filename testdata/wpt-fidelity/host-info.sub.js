// What get-host-info.sub.js-style scripts read from the server: every kind
// of host and port substitution, as wptserve expands them.
function hostInfo() {
  return {
    host: "{{host}}",
    www: "{{domains[www]}}",
    www1: "{{domains[www1]}}",
    www2: "{{domains[www2]}}",
    idn: "{{domains[天気の良い日]}}",
    eleve: "{{domains[élève]}}",
    nonexistent: "{{domains[nonexistent]}}",
    main: "{{hosts[][]}}",
    alt: "{{hosts[alt][]}}",
    altWww1: "{{hosts[alt][www1]}}",
    http: ["{{ports[http][0]}}", "{{ports[http][1]}}"],
    https: ["{{ports[https][0]}}", "{{ports[https][1]}}"],
    wss: "{{ports[wss][0]}}",
  };
}
