// The mock console of `fundament plugin check`: frames one plugin page as the console does
// (sandbox "allow-scripts allow-same-origin allow-forms") and speaks the host side of the
// postMessage protocol. The check drives it over the DevTools protocol: `check.start(config)`,
// `check.send(message)`, and reads `check.log()`, every message the frame posted.
'use strict';
(() => {
  const state = { log: [], inited: false, refreshes: 0, config: null, frame: null };

  const send = (message) => {
    if (message.type === 'fundament:init') state.inited = true;
    state.frame.contentWindow.postMessage(message, state.config.pluginOrigin);
  };

  window.check = {
    // config: { src, pluginOrigin, refreshReplies: [message…], refreshDelayMs }
    start(config) {
      state.config = config;
      // Not a style attribute in host.html: the host page's CSP admits no inline style.
      document.body.style.margin = '0';
      const frame = document.createElement('iframe');
      frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
      frame.title = 'plugin page';
      frame.style.cssText = 'border:0;width:1024px;height:480px;display:block';
      frame.src = config.src;
      state.frame = frame;
      document.body.append(frame);
    },
    send,
    log: () => JSON.stringify(state.log),
  };

  window.addEventListener('message', (event) => {
    if (!state.frame || event.source !== state.frame.contentWindow) return;
    let data;
    try {
      data = JSON.parse(JSON.stringify(event.data ?? null));
    } catch {
      data = String(event.data);
    }
    state.log.push({ beforeInit: !state.inited, origin: event.origin, data });
    const type = data && data.type;
    if (type === 'plugin:resize' && typeof data.height === 'number') {
      state.frame.style.height = `${Math.min(Math.max(Math.ceil(data.height), 80), 20000)}px`;
    }
    // As the console: a refresh request after init gets the scenario's next answer, a moment later.
    if (type === 'plugin:request-token-refresh' && state.inited) {
      const replies = state.config.refreshReplies;
      const reply = replies[Math.min(state.refreshes++, replies.length - 1)];
      setTimeout(() => send(reply), state.config.refreshDelayMs);
    }
  });
})();
