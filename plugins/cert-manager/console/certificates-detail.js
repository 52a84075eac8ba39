// One certificate: what it asks for, what was issued, and its conditions.
import { detailPage, issuerRefText, readyText, renderConditionsTable, renderDefList, section } from './_shared.js';

function privateKeyText(key) {
  if (!key?.algorithm) return undefined;
  return key.size ? `${key.algorithm} ${key.size}` : key.algorithm;
}

detailPage({
  resource: 'certificates',
  title: 'Certificate',
  noneText: 'No certificate selected.',
  render: (cert, now) => {
    const spec = cert.spec ?? {};
    const status = cert.status ?? {};
    return (
      section(
        'Spec',
        renderDefList([
          ['Namespace', cert.metadata?.namespace],
          ['Secret', spec.secretName],
          ['Issuer', issuerRefText(spec.issuerRef)],
          ['Common name', spec.commonName],
          ['DNS names', spec.dnsNames],
          ['Duration', spec.duration],
          ['Renew before', spec.renewBefore],
          ['Private key', privateKeyText(spec.privateKey)],
          ['Is CA', spec.isCA ?? false],
        ]),
      ) +
      section(
        'Status',
        renderDefList([
          ['Ready', readyText(cert)],
          ['Not before', status.notBefore],
          ['Not after', status.notAfter],
          ['Renewal time', status.renewalTime],
          ['Revision', status.revision],
        ]),
      ) +
      section('Conditions', renderConditionsTable(status.conditions, now))
    );
  },
});
