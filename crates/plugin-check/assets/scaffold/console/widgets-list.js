// The list of Widgets: one row each, the name a link to its detail view.
import { WIDGETS, cell, errorText, messageRow, whenTokenReturns } from './_shared.js';

const { fundament } = window;
const rows = document.getElementById('rows');

function row(widget) {
  const { name, namespace } = widget.metadata;
  const link = document.createElement('a');
  link.href = '#';
  link.className = 'plugin-link';
  link.textContent = name;
  link.addEventListener('click', (event) => {
    event.preventDefault();
    fundament.navigate(name, namespace); // plugin:navigate, to the console's origin only
  });
  const tr = document.createElement('tr');
  tr.append(cell(link), cell(namespace), cell(String(widget.spec?.size ?? '—')), cell(widget.spec?.color));
  return tr;
}

async function draw() {
  try {
    await fundament.init;
    const { items } = await fundament.k8s.list(WIDGETS);
    rows.replaceChildren(...(items.length ? items.map(row) : [messageRow(4, 'No widgets yet.')]));
  } catch (err) {
    rows.replaceChildren(messageRow(4, errorText(err), true));
    await whenTokenReturns(err, draw);
  }
}

draw();
