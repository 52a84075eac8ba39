// FSC installations in every namespace the plugin can see; a row opens the installation,
// "Add installation" opens the console's create view (this plugin's create page).
import {
  GROUP,
  RESOURCE,
  VERSION,
  emptyRow,
  errorMessage,
  errorRow,
  escapeHtml,
  formatAge,
  navigateToCreate,
  navigateToDetail,
  sdk,
} from './_shared.js';

const COLUMNS = 6;
const tbody = document.getElementById('rows');

document.getElementById('add').addEventListener('click', navigateToCreate);

tbody.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-name]');
  if (!link) return;
  event.preventDefault();
  navigateToDetail(link.dataset.name, link.dataset.namespace);
});

function row(installation, now) {
  const { name, namespace, creationTimestamp } = installation.metadata ?? {};
  const target = `data-name="${escapeHtml(name)}" data-namespace="${escapeHtml(namespace)}"`;
  const link = `<a href="#" ${target}>${escapeHtml(name)}</a>`;
  const cells = [
    installation.spec?.groupID,
    installation.spec?.directory?.mode,
    installation.status?.phase,
    formatAge(creationTimestamp, now),
  ];
  const rest = cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('');
  return `<tr><td>${escapeHtml(namespace)}</td><td>${link}</td>${rest}</tr>`;
}

async function main() {
  try {
    const fundament = sdk();
    await fundament.init;
    const { items = [] } = await fundament.k8s.list({ group: GROUP, version: VERSION, resource: RESOURCE });
    if (items.length === 0) {
      tbody.innerHTML = emptyRow(COLUMNS, 'No FSC installations found.');
      return;
    }
    const key = (i) => `${i.metadata?.namespace ?? ''}/${i.metadata?.name ?? ''}`;
    const now = Date.now();
    tbody.innerHTML = [...items]
      .sort((a, b) => key(a).localeCompare(key(b)))
      .map((i) => row(i, now))
      .join('');
  } catch (error) {
    tbody.innerHTML = errorRow(COLUMNS, errorMessage(error));
  }
}

main();
