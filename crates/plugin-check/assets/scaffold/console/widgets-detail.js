// One Widget: the object the console opened this view on (init's `resource`).
import { WIDGETS, errorText, whenTokenReturns } from './_shared.js';

const { fundament } = window;
const heading = document.getElementById('heading');
const content = document.getElementById('content');
document.getElementById('back').addEventListener('click', () => fundament.back());

function field(list, label, value) {
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.textContent = value ?? '—';
  list.append(dt, dd);
}

function message(text, error = false) {
  const p = document.createElement(error ? 'div' : 'p');
  p.className = error ? 'plugin-error' : 'plugin-text';
  if (error) p.setAttribute('role', 'alert');
  p.textContent = text;
  content.replaceChildren(p);
}

async function draw() {
  try {
    const { resource } = await fundament.init;
    if (!resource?.name) {
      message('No widget selected.');
      return;
    }
    heading.textContent = `Widget · ${resource.name}`;
    const widget = await fundament.k8s.get({ ...WIDGETS, name: resource.name, namespace: resource.namespace });
    const list = document.createElement('dl');
    list.className = 'plugin-deflist';
    field(list, 'Namespace', widget.metadata.namespace);
    field(list, 'Size', String(widget.spec?.size ?? '—'));
    field(list, 'Colour', widget.spec?.color);
    field(list, 'Created', widget.metadata.creationTimestamp);
    content.replaceChildren(list);
  } catch (err) {
    message(errorText(err), true);
    await whenTokenReturns(err, draw);
  }
}

draw();
