// Certificate requests in every namespace; a row opens the request's detail view.
import { approvedText, formatAge, issuerRefText, listPage, readyText } from './_shared.js';

listPage({
  resource: 'certificaterequests',
  emptyText: 'No certificate requests found.',
  columns: [
    { value: (r) => r.metadata?.name },
    { value: (r) => r.metadata?.namespace },
    { value: (r) => approvedText(r) },
    { value: (r) => readyText(r) },
    { value: (r) => issuerRefText(r.spec?.issuerRef) },
    { value: (r, now) => formatAge(r.metadata?.creationTimestamp, now) },
  ],
});
