// Issuers in every namespace; a row opens the issuer's detail view.
import { formatAge, issuerType, listPage, readyText } from './_shared.js';

listPage({
  resource: 'issuers',
  emptyText: 'No issuers found.',
  columns: [
    { value: (i) => i.metadata?.name },
    { value: (i) => i.metadata?.namespace },
    { value: (i) => issuerType(i) },
    { value: (i) => readyText(i) },
    { value: (i, now) => formatAge(i.metadata?.creationTimestamp, now) },
  ],
});
