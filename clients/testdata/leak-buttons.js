// Run in a page by the client tests (test_wdext.py, test.mjs): two
// buttons. "render" draws a list of 20 rows anew (the old rows, which the
// test looked up, are detached: the driver holds them, the page does
// not); "leak" also keeps a detached div a click.
window.keptDivs = [];
const list = () => { const ul = document.createElement('ul'); ul.id = 'rows';
  for (let k = 0; k < 20; k++) { const li = document.createElement('li'); li.textContent = 'row ' + k; ul.appendChild(li); }
  (document.getElementById('rows') || document.body.appendChild(document.createElement('ul'))).replaceWith(ul); };
for (const id of ['render', 'leak']) { const b = document.createElement('button'); b.id = id; b.textContent = id; document.body.appendChild(b); }
document.getElementById('render').addEventListener('click', list);
document.getElementById('leak').addEventListener('click', () => { const d = document.createElement('div'); d.className = 'kept'; keptDivs.push(d); list(); });
list();
