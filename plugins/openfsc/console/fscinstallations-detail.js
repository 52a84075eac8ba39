// One FSC installation: its spec, its observed status, its inways and outways, and conditions.
import {
  GROUP,
  RESOURCE,
  VERSION,
  errorBox,
  errorMessage,
  escapeHtml,
  isHttpUrl,
  renderConditionsTable,
  renderDefList,
  renderTable,
  section,
  sdk,
} from './_shared.js';

const heading = document.getElementById('heading');
const content = document.getElementById('content');

function externalText(external) {
  if (!external) return undefined;
  const trust = external.trustAnchor;
  const anchor = trust?.name ? `${trust.name} (${trust.key || 'ca.crt'})` : '—';
  return `${external.address ?? '—'}, peer ${external.peerID ?? '—'}, trust anchor ${anchor}`;
}

function postgresText(postgres) {
  if (!postgres) return undefined;
  const parts = [
    `${postgres.instances ?? 1} × ${postgres.storageSize ?? '1Gi'}`,
    `class ${postgres.storageClass ?? '—'}`,
  ];
  if (postgres.image) parts.push(postgres.image);
  return parts.join(', ');
}

/** The controller UI as a link, but only for http(s) URLs: anything else stays text. */
function controllerLink(url) {
  if (!url) return undefined;
  if (!isHttpUrl(url)) return url;
  const escaped = escapeHtml(url);
  return { html: `<a href="${escaped}" target="_blank" rel="noopener">${escaped}</a>` };
}

function specSection(installation) {
  const spec = installation.spec ?? {};
  return section(
    'Spec',
    renderDefList([
      ['Namespace', installation.metadata?.namespace],
      ['Group ID', spec.groupID],
      ['Peer ID', spec.peerID],
      ['Directory', spec.directory?.mode],
      ['External directory', externalText(spec.directory?.external)],
      ['Certificate secret', spec.certificate?.existingSecret],
      ['Manager address', spec.managerAddress],
      ['Controller URL', spec.controllerURL],
      ['PostgreSQL', postgresText(spec.postgres)],
      ['Auto-sign grants', spec.autoSignGrants],
    ]),
  );
}

function statusSection(installation) {
  const status = installation.status ?? {};
  return section(
    'Status',
    renderDefList([
      ['Phase', status.phase],
      ['Message', status.message],
      ['Manager address', status.managerAddress],
      ['Controller UI', controllerLink(status.controllerURL ?? installation.spec?.controllerURL)],
      ['Observed generation', status.observedGeneration],
    ]),
  );
}

/** Declared gateways (spec) joined with what the operator observed for each (status), by name. */
function gatewaysSection(title, declared, observed, withAddress) {
  if (!Array.isArray(declared) || declared.length === 0) {
    return section(title, '<p class="plugin-text">None declared.</p>');
  }
  const byName = new Map((Array.isArray(observed) ? observed : []).map((g) => [g.name, g]));
  const headers = withAddress
    ? ['Name', 'Self address', 'Phase', 'URL', 'Message']
    : ['Name', 'Phase', 'URL', 'Message'];
  const rows = declared.map((gateway) => {
    const seen = byName.get(gateway.name) ?? {};
    const cells = [gateway.name, seen.phase, seen.url, seen.message];
    if (withAddress) cells.splice(1, 0, gateway.selfAddress);
    return cells;
  });
  return section(title, renderTable(headers, rows));
}

function render(installation, now) {
  const spec = installation.spec ?? {};
  const status = installation.status ?? {};
  return (
    specSection(installation) +
    statusSection(installation) +
    gatewaysSection('Inways', spec.inways, status.inways, true) +
    gatewaysSection('Outways', spec.outways, status.outways, false) +
    section('Conditions', renderConditionsTable(status.conditions, now))
  );
}

async function main() {
  try {
    const fundament = sdk();
    const context = await fundament.init;
    const name = context.resource?.name;
    if (!name) {
      content.innerHTML = '<p class="plugin-text">No FSC installation selected.</p>';
      return;
    }
    heading.textContent = `FSC installation · ${name}`;
    const namespace = context.resource.namespace || undefined;
    const args = { group: GROUP, version: VERSION, resource: RESOURCE, name, namespace };
    const installation = await fundament.k8s.get(args);
    content.innerHTML = render(installation, Date.now());
  } catch (error) {
    content.innerHTML = errorBox(`Failed to load: ${errorMessage(error)}`);
  }
}

main();
