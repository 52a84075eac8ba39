// Cluster issuers (cluster-scoped); a row opens the issuer's detail view.
import { formatAge, issuerType, listPage, readyText } from './_shared.js';

listPage({
  resource: 'clusterissuers',
  emptyText: 'No cluster issuers found.',
  columns: [
    { value: (i) => i.metadata?.name },
    { value: (i) => issuerType(i) },
    { value: (i) => readyText(i) },
    { value: (i, now) => formatAge(i.metadata?.creationTimestamp, now) },
  ],
});
