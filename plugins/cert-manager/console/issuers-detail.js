// One namespaced issuer: how it issues, and its conditions.
import { detailPage, issuerSpecRows, readyText, renderConditionsTable, renderDefList, section } from './_shared.js';

detailPage({
  resource: 'issuers',
  title: 'Issuer',
  noneText: 'No issuer selected.',
  render: (issuer, now) =>
    section(
      'Spec',
      renderDefList([
        ['Namespace', issuer.metadata?.namespace],
        ...issuerSpecRows(issuer),
        ['Ready', readyText(issuer)],
      ]),
    ) + section('Conditions', renderConditionsTable(issuer.status?.conditions, now)),
});
