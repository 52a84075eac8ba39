// One certificate request: its issuer, approval and conditions (the CSR itself is not shown).
import {
  approvedText,
  detailPage,
  issuerRefText,
  readyText,
  renderConditionsTable,
  renderDefList,
  section,
} from './_shared.js';

detailPage({
  resource: 'certificaterequests',
  title: 'Certificate request',
  noneText: 'No certificate request selected.',
  render: (request, now) => {
    const spec = request.spec ?? {};
    const status = request.status ?? {};
    return (
      section(
        'Spec',
        renderDefList([
          ['Namespace', request.metadata?.namespace],
          ['Certificate', request.metadata?.annotations?.['cert-manager.io/certificate-name']],
          ['Issuer', issuerRefText(spec.issuerRef)],
          ['Duration', spec.duration],
          ['Is CA', spec.isCA ?? false],
          ['Usages', spec.usages],
          ['Requested by', spec.username],
        ]),
      ) +
      section(
        'Status',
        renderDefList([
          ['Approved', approvedText(request)],
          ['Ready', readyText(request)],
          ['Failure time', status.failureTime],
        ]),
      ) +
      section('Conditions', renderConditionsTable(status.conditions, now))
    );
  },
});
