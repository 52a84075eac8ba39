// Certificates in every namespace; a row opens the certificate's detail view.
import { formatAge, issuerRefText, listPage, readyText } from './_shared.js';

listPage({
  resource: 'certificates',
  emptyText: 'No certificates found.',
  columns: [
    { value: (c) => c.metadata?.name },
    { value: (c) => c.metadata?.namespace },
    { value: (c) => readyText(c) },
    { value: (c) => c.spec?.secretName },
    { value: (c) => issuerRefText(c.spec?.issuerRef) },
    { value: (c, now) => formatAge(c.metadata?.creationTimestamp, now) },
  ],
});
