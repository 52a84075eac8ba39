// One cluster issuer: how it issues, and its conditions.
import { detailPage, issuerSpecRows, readyText, renderConditionsTable, renderDefList, section } from './_shared.js';

detailPage({
  resource: 'clusterissuers',
  title: 'Cluster issuer',
  noneText: 'No cluster issuer selected.',
  render: (issuer, now) =>
    section('Spec', renderDefList([...issuerSpecRows(issuer), ['Ready', readyText(issuer)]])) +
    section('Conditions', renderConditionsTable(issuer.status?.conditions, now)),
});
