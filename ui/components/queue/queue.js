// The queue held in the browser (see __init__.py): the item on screen and the next ones already drawn, the keys,
// and the decisions sent in the background until the server has answered each one.
//
// Data from the server is only ever set as text (textContent) or, for math, rebuilt element by element from the
// server's sanitized MathML against the allow-list below: nothing from the data reaches innerHTML.

const MATH_NS = "http://www.w3.org/1998/Math/MathML";
const MATH_TAGS = new Set(["math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot",
  "msup", "msub", "msubsup", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
  "mphantom", "menclose", "semantics", "annotation", "merror", "mmultiscripts", "mprescripts", "none"]);
const MATH_ATTRIBUTES = new Set(["display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
  "columnalign", "rowspacing", "columnspacing", "columnlines", "rowlines", "frame", "accent", "accentunder",
  "movablelimits", "width", "height", "depth", "minsize", "maxsize", "notation", "displaystyle", "scriptlevel",
  "linethickness", "symmetric", "largeop", "form", "encoding"]);
const RESEND_MS = 3000;  // a decision not answered by then is sent again
const WAKE_MS = 8000;  // no answer for this long: ask for a run of the whole app
// A key pressed while Streamlit draws the queue's element anew (no queue on the page for a moment, seconds under
// load) is kept this long for the item that was on screen, and used if that item is on screen again once it is back.
const REDRAW_MS = 10000;
// What a page gives in its data (`page`): its keys, the sections an item may open, what its items are called
// (`noun`), what it says of an item decided before (`mine`).
// A key is {key, text, kind, decision} (the decision's fields, the comment added), or {key, text, kind, action}
// with action "skip" (on to the next, the item given up) or "back".

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function mathNode(source) {
  const parsed = new DOMParser().parseFromString(source, "application/xml");
  const copy = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.nodeValue);
    if (node.nodeType !== Node.ELEMENT_NODE || !MATH_TAGS.has(node.localName)) return null;
    const out = document.createElementNS(MATH_NS, node.localName);
    for (const attribute of node.attributes) {
      if (MATH_ATTRIBUTES.has(attribute.name)) out.setAttribute(attribute.name, attribute.value);
    }
    for (const child of node.childNodes) {
      const made = copy(child);
      if (made) out.appendChild(made);
    }
    return out;
  };
  const root = parsed.documentElement;
  return root && root.localName === "math" ? copy(root) : null;
}

// `source`: math as written (its run's `s`) instead of typeset.
function runsNode(runs, tag = "span", source = false) {
  const box = el(tag, "aq-runs");
  for (const run of runs || []) {
    let node = null;
    if (source && typeof run.s === "string") node = el("span", "aq-source", run.s);
    else if (typeof run.m === "string") node = mathNode(run.m);
    if (!node) {
      node = el(run.b ? "strong" : run.c ? "code" : "span", null, typeof run.t === "string" ? run.t : "");
    }
    if (run.k === "add" || run.k === "del") {
      const mark = el("span", "aq-" + run.k);
      mark.appendChild(node);
      node = mark;
    }
    box.appendChild(node);
  }
  return box;
}

function sectionNode(title, section, noun) {
  const box = el("div", "aq-section");
  box.dataset.section = title;
  box.appendChild(el("div", "aq-section-title", title));
  if (section.paragraphs) {
    for (const paragraph of section.paragraphs) box.appendChild(runsNode(paragraph, "p"));
  } else if (section.runs) {
    box.appendChild(runsNode(section.runs, "div"));
  } else if (section.lines) {
    if (!section.lines.length) box.appendChild(el("div", "aq-note", "No automatic checks or model outputs."));
    for (const line of section.lines) {
      const row = el("div", "aq-line");
      if (line.name) row.appendChild(el("strong", null, line.name + ": "));
      row.appendChild(line.json !== undefined ? el("pre", "aq-json", line.json) : runsNode(line.runs));
      box.appendChild(row);
    }
  } else {
    box.appendChild(el("div", "aq-note", "No " + title.toLowerCase() + " for this " + noun + "."));
  }
  return box;
}

// One item drawn once, hidden until it is the one on screen: its columns side by side ({title, runs, badge}),
// its fields, and the page's sections.
// An item's tables ({title, columns, rows}: Adjudicate's labels and decisions), every cell as text.
function tablesNode(tables) {
  const box = el("div", "aq-tables");
  for (const table of tables) {
    if (table.title) box.appendChild(el("div", "aq-table-title", table.title));
    const grid = el("table", "aq-table");
    const head = el("tr");
    for (const column of table.columns || []) head.appendChild(el("th", null, column));
    grid.appendChild(head);
    for (const row of table.rows || []) {
      const line = el("tr");
      for (const cell of row) line.appendChild(el("td", null, cell));
      grid.appendChild(line);
    }
    box.appendChild(grid);
  }
  return box;
}

function itemNode(item, page) {
  const node = el("div", "aq-item");
  node.hidden = true;
  node.dataset.item = String(item.id);
  if (Array.isArray(item.tables) && item.tables.length) node.appendChild(tablesNode(item.tables));
  const columns = el("div", "aq-columns");
  for (const column of item.columns || []) {
    const box = el("div", "aq-column");
    box.appendChild(el("div", "aq-column-title", column.title));
    box.appendChild(runsNode(column.runs, "div"));
    if (column.badge) box.appendChild(el("div", "aq-badge", column.badge));
    columns.appendChild(box);
  }
  node.appendChild(columns);
  const fields = el("div", "aq-fields");
  for (const [name, runs] of item.fields || []) {
    const row = el("div", "aq-field");
    row.appendChild(el("strong", null, name + ": "));
    row.appendChild(runsNode(runs));
    fields.appendChild(row);
  }
  node.appendChild(fields);
  const sections = el("div", "aq-sections");
  for (const title of page.sections) {
    sections.appendChild(sectionNode(title, (item.sections || {})[title] || {}, page.noun));
  }
  node.appendChild(sections);
  return node;
}

function uuid() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, (c) => {
    const r = (crypto.getRandomValues(new Uint8Array(1))[0] & 15);
    return (c === "x" ? r : (r & 3) | 8).toString(16);
  });
}

// What happens to a decision, for whoever listens (the keypress benchmark): made, then answered.
function tell(what, id, outcome) {
  window.dispatchEvent(new CustomEvent("annotator-queue", {detail: {what, id, outcome}}));
}

class Queue {
  constructor(storeKey, page) {
    this.storeKey = storeKey;
    this.page = {noun: "item", sections: [], keys: [], mine: "You decided this one.", ...page};
    this.keys = {};  // lower-case key -> its spec
    for (const spec of this.page.keys) this.keys[spec.key.toLowerCase()] = spec;
    this.items = new Map();  // id -> item
    this.nodes = new Map();  // id -> drawn node
    this.order = [];  // the server's order of the items it holds for this person
    this.decided = new Set();  // items decided or skipped here: never shown again from the queue
    this.history = [];  // items decided here, for B
    this.reviewing = null;  // index into history while going back, else null
    this.refused = [];  // messages of refused decisions, shown until the next key
    this.returned = [];  // items whose decision was refused, back on screen
    this.generation = null;
    this.sentAt = 0;
    this.answeredAt = performance.now();
    this.wokenAt = 0;
    this.seq = 0;
    this.offset = null;
    this.pending = this.load();
    for (const decision of this.pending) this.decided.add(decision.item);
    this.current = undefined;  // nothing drawn yet
    this.shownAt = performance.now();
    this.leftAt = null;  // when Streamlit last took the queue's element away
    this.kept = null;  // a key pressed since then: {key, item, at}
    this.open = new Set(JSON.parse(localStorage.getItem("annotatorQueueSections") || "[]"));
  }

  // The server's clock less this one's, as near as an answer tells (it left the server before it came here): the
  // largest seen, kept across reloads, so that it only grows and the keys' times stay in the order pressed.
  learnOffset(now) {
    if (typeof now !== "number") return;
    const offset = Math.max(this.offset ?? -Infinity, now - Date.now());
    if (offset === this.offset) return;
    this.offset = offset;
    try {
      localStorage.setItem(this.storeKey + ":offset", String(offset));
    } catch (error) {
      // Storage refused: the offset is still learnt again from each answer.
    }
  }

  load() {
    try {
      const offset = localStorage.getItem(this.storeKey + ":offset");
      if (offset !== null && Number.isFinite(Number(offset))) this.offset = Number(offset);
      const stored = JSON.parse(localStorage.getItem(this.storeKey) || "[]");
      return Array.isArray(stored) ? stored.filter((d) => d && typeof d.id === "string") : [];
    } catch (error) {
      return [];
    }
  }

  save() {
    try {
      localStorage.setItem(this.storeKey, JSON.stringify(this.pending));
    } catch (error) {
      // Storage full or refused: the decisions are still held here and sent until answered.
    }
  }

  // The root element given by Streamlit; drawn once, kept while the component stays mounted.
  attach(parent) {
    if (this.root && this.root.parentNode === parent) return;
    this.root = el("div", "aq-root");
    this.root.tabIndex = -1;
    this.root.dataset.store = this.storeKey;  // whose queue, on which page
    this.heading = el("h4", "aq-heading", "Loading the " + this.page.noun + "...");
    const bar = el("div", "aq-buttons");
    this.buttons = {};
    for (const {key, text, kind} of this.page.keys) {
      const button = el("button", "aq-button aq-" + (kind || "secondary") + " aq-key-" + key.toLowerCase());
      button.type = "button";
      button.dataset.key = key;
      button.appendChild(el("span", "aq-button-text", text));
      button.appendChild(el("kbd", null, key));
      button.addEventListener("click", () => this.press(key.toLowerCase()));
      this.buttons[key.toLowerCase()] = button;
      bar.appendChild(button);
    }
    this.status = el("div", "aq-status");
    this.indicator = el("span", "aq-indicator", "");
    this.indicator.setAttribute("role", "status");
    this.message = el("span", "aq-message", "");
    this.status.append(this.indicator, this.message);
    this.comment = el("input", "aq-comment");
    this.comment.type = "text";
    this.comment.placeholder = "Comment, optional, saved with the decision (C to write, Esc to leave)";
    this.comment.setAttribute("aria-label", "Comment");
    const toggles = el("div", "aq-toggles");
    this.toggles = {};
    for (const title of this.page.sections) {
      const toggle = el("button", "aq-toggle", title);
      toggle.type = "button";
      toggle.addEventListener("click", () => this.toggle(title));
      this.toggles[title] = toggle;
      toggles.appendChild(toggle);
    }
    this.stage = el("div", "aq-stage");
    this.empty = el("div", "aq-empty");
    this.empty.hidden = true;
    this.root.append(this.heading, bar, this.status, this.comment, toggles, this.empty, this.stage);
    for (const old of parent.querySelectorAll(":scope > .aq-root")) old.remove();
    parent.appendChild(this.root);  // beside the style element Streamlit put there
    this.nodes.clear();
    this.current = undefined;  // drawn anew (even when nothing is on screen)
    this.showSections();
  }

  toggle(title) {
    if (this.open.has(title)) this.open.delete(title); else this.open.add(title);
    localStorage.setItem("annotatorQueueSections", JSON.stringify([...this.open]));
    this.showSections();
  }

  showSections() {
    for (const title of this.page.sections) this.toggles[title].classList.toggle("aq-on", this.open.has(title));
    this.root.dataset.open = [...this.open].join("|");
    for (const title of this.page.sections) this.root.classList.toggle("aq-open-" + title.split(" ")[0].toLowerCase(), this.open.has(title));
  }

  // Data from a run of the page: the items held (the outcomes of the decisions sent came ahead: `acknowledge`).
  update(data, setStateValue, setTriggerValue) {
    this.setStateValue = setStateValue;
    this.setTriggerValue = setTriggerValue;
    this.answeredAt = performance.now();
    this.learnOffset(data.now);
    this.userMessage = data.message || "";
    this.emptyText = data.empty || "";
    if (this.generation !== null && data.generation !== this.generation) {
      this.order = [];
      this.reviewing = null;
    }
    this.generation = data.generation;
    for (const item of data.items || []) {
      // Sent again though drawn (another reviewer's decision met this one's): drawn again, with it.
      if (this.nodes.has(item.id) && this.items.has(item.id)) this.redraw(item.id);
      this.items.set(item.id, item);
    }
    const order = Array.isArray(data.order) ? data.order : (data.items || []).map((item) => item.id);
    // A refused one stays first until decided again (or skipped), though the server no longer holds it.
    this.returned = this.returned.filter((id) => this.items.has(id) && !this.decided.has(id));
    this.order = [...this.returned, ...order.filter((id) => !this.returned.includes(id))];
    // Forget the items no longer held, but those B may go back to.
    const kept = new Set([...this.order, ...this.history.map((entry) => entry.item)]);
    for (const id of this.items.keys()) if (!kept.has(id)) this.items.delete(id);
    if (data.previous) this.showPrevious(data.previous);
    if (data.again) {
      // More to claim (now), or the database was busy (soon); each at a moment of its own, so a team spreads out.
      clearTimeout(this.againTimer);
      // (More to claim: the person reads the first one meanwhile, and a team signing in at once leaves the
      // database to its sign-ins.)
      const wait = data.again === "now" ? 500 + Math.random() * 2000 : 1000 + Math.random() * 1500;
      this.againTimer = setTimeout(() => this.send(), wait);
    }
    if (this.pending.length && performance.now() - this.sentAt > RESEND_MS) this.send();
    this.draw();
  }

  // The outcomes of the decisions just stored, sent ahead of the rest of the page's run (`acknowledge` in
  // __init__.py): the answered ones let go, a refused one back on screen.
  acknowledge(data) {
    this.answeredAt = performance.now();
    this.learnOffset(data.now);
    if (Array.isArray(data.overridable)) this.overridableIds = new Set(data.overridable);
    if (this.answer(data.outcomes || {})) this.draw();
  }

  // Drops the decisions `outcomes` answers; true when there were any.
  answer(outcomes) {
    const before = this.pending.length;
    this.pending = this.pending.filter((decision) => {
      const outcome = outcomes[decision.id];
      if (outcome === undefined) return true;
      tell("answered", decision.id, outcome);
      if (outcome !== "saved" && outcome !== "skipped") this.refuse(decision, outcome);
      return false;
    });
    if (this.pending.length === before) return false;
    this.save();
    return true;
  }

  redraw(id) {
    this.nodes.get(id).remove();
    this.nodes.delete(id);
    if (this.current === id) this.current = undefined;
  }

  refuse(decision, outcome) {
    // Another reviewer decided meanwhile: the same key pressed again on this item overrides their decision.
    if (this.overridableIds?.has(decision.id)) this.overriding = decision;
    const item = this.items.get(decision.item);
    const name = item ? item.data_id : "#" + decision.item;
    this.refused.push(name + ": " + outcome);
    // The item comes back, on screen now, so that the annotator sees what was not saved.
    this.decided.delete(decision.item);
    this.history = this.history.filter((entry) => entry.item !== decision.item);
    if (item) {
      this.returned = [decision.item, ...this.returned.filter((id) => id !== decision.item)];
      this.order = [decision.item, ...this.order.filter((id) => id !== decision.item)];
      this.reviewing = null;
    }
  }

  showPrevious(item) {
    this.items.set(item.id, item);
    if (!this.history.some((entry) => entry.item === item.id)) {
      this.history.unshift({item: item.id, decision: item.mine});
      this.reviewing = 0;
    }
  }

  next() {
    return this.order.find((id) => !this.decided.has(id) && this.items.has(id)) ?? null;
  }

  onScreen() {
    if (this.reviewing !== null) return this.history[this.reviewing]?.item ?? null;
    return this.next();
  }

  draw() {
    if (!this.root) return;
    const id = this.onScreen();
    const changed = id !== this.current;
    // Read before writing: the layout is still the last frame's, so this costs nothing.
    const above = changed && this.root.getBoundingClientRect().top < 0;
    if (id !== null && !this.nodes.has(id) && this.items.has(id)) this.build(id);  // not drawn ahead: now
    if (changed) {
      const old = this.nodes.get(this.current);
      if (old) old.hidden = true;
      this.current = id;
      this.shownAt = performance.now();
      const item = id === null ? null : this.items.get(id);
      this.heading.textContent = item ? item.heading : (this.emptyText ? this.page.nothing || "Nothing left"
        : "Loading...");
      // An item may name a key's decision in its own words (a rewrite type's labels).
      for (const [key, spec] of Object.entries(this.keys)) {
        const text = this.buttons[key].firstChild;
        const wanted = (item && item.labels && item.labels[key]) || spec.text;
        if (text.textContent !== wanted) text.textContent = wanted;
      }
      this.comment.value = this.reviewing !== null ? (this.history[this.reviewing].decision?.comment || "") : "";
      if (above) this.toTop();  // the next one starts at its top
    }
    const node = this.nodes.get(id);
    if (node) node.hidden = false;
    this.empty.hidden = id !== null;
    this.empty.textContent = id === null ? this.emptyText : "";
    for (const [key, spec] of Object.entries(this.keys)) {
      if (spec.action !== "back") this.buttons[key].disabled = id === null;
    }
    this.root.dataset.item = id === null ? "" : String(id);
    this.root.dataset.ready = String(this.order.filter((other) => !this.decided.has(other) && this.items.has(other))
      .length);  // how many are ready here, the one on screen too
    this.drawStatus();
    this.later();
  }

  build(id) {
    const node = itemNode(this.items.get(id), this.page);
    this.nodes.set(id, node);
    this.stage.appendChild(node);
  }

  // After the frame that shows the next one: the next few drawn ahead (hidden), one per task so that a key never
  // waits for more than one; the others let go.
  later() {
    if (this.preparing) return;
    this.preparing = true;
    requestAnimationFrame(() => setTimeout(() => {
      this.preparing = false;
      const wanted = this.wanted();
      for (const [other, node] of this.nodes) {
        if (!wanted.includes(other)) {
          node.remove();
          this.nodes.delete(other);
        }
      }
      const missing = wanted.find((other) => other !== null && other !== undefined && !this.nodes.has(other));
      if (missing !== undefined) {
        this.build(missing);
        this.later();
      }
    }, 0));
  }

  // The items to keep drawn: the one on screen and the next few.
  wanted() {
    return [this.current, ...this.order.filter((other) => !this.decided.has(other) && this.items.has(other))
      .slice(0, 4)];
  }

  toTop() {
    if (this.scroller === undefined) {
      this.scroller = null;
      for (let node = this.root.parentElement; node; node = node.parentElement) {
        const overflow = getComputedStyle(node).overflowY;
        if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) {
          this.scroller = node;
          break;
        }
      }
    }
    if (this.scroller) this.scroller.scrollTop = 0;
    else window.scrollTo(0, 0);
  }

  drawStatus() {
    const waiting = this.pending.length;
    const late = waiting && performance.now() - this.sentAt > RESEND_MS;
    this.indicator.textContent = waiting ? `${waiting} waiting${late ? " (no answer yet, sending again)" : ""}` : "saved";
    this.indicator.classList.toggle("aq-waiting", waiting > 0);
    const parts = [];
    if (this.reviewing !== null) {
      const mine = this.history[this.reviewing].decision;
      parts.push(mine && !mine.skip
        ? this.page.mine + " Press a decision key to change it, S to go forward."
        : "You went back to this one. Press a decision key to change it, S to go forward.");
    }
    if (this.userMessage) parts.push(this.userMessage);
    this.message.textContent = parts.join(" · ");
    this.refusedNode ??= el("div", "aq-refused");
    this.refusedNode.setAttribute("role", "alert");
    this.refusedNode.textContent = this.refused.join(" · ");
    this.refusedNode.hidden = !this.refused.length;
    if (this.refusedNode.parentNode !== this.status) this.status.appendChild(this.refusedNode);
  }

  press(key) {
    const id = this.onScreen();
    const spec = this.keys[key];
    if (!spec) return;
    if (id === null && spec.action !== "back") {
      // Nothing on screen (the next ones are on their way, or none are left): the key decides nothing.
      this.userMessage = "No " + this.page.noun + " on screen: that key was not used.";
      this.drawStatus();
      return;
    }
    if (spec.decision) {
      this.decide({...spec.decision, comment: this.comment.value.trim()}, id);
    } else if (spec.action === "skip") {
      if (this.reviewing !== null) this.forward();
      else this.decide({skip: true}, id);
    } else if (spec.action === "back") {
      this.back();
    } else {
      return;
    }
    this.draw();
  }

  decide(what, id) {
    const now = Date.now();
    const again = this.overriding;
    if (again && again.item === id && !what.skip && Object.keys(what).every((field) => field === "comment" ||
        again[field] === what[field])) what = {...what, override: true};
    if (again && again.item === id) this.overriding = null;
    const decision = {id: uuid(), item: id, at: now, spent: Math.round(performance.now() - this.shownAt), ...what};
    this.refused = [];
    this.pending.push(decision);
    tell("decided", decision.id, null);
    this.save();
    if (this.reviewing !== null) {
      this.history[this.reviewing].decision = decision;
      this.forward();
    } else {
      this.decided.add(id);
      if (!decision.skip) this.history.push({item: id, decision});
    }
    this.sendSoon();
  }

  forward() {
    this.reviewing = this.reviewing + 1 < this.history.length ? this.reviewing + 1 : null;
  }

  back() {
    if (this.reviewing === null && this.history.length) this.reviewing = this.history.length - 1;
    else if (this.reviewing !== null && this.reviewing > 0) this.reviewing -= 1;
    else if (this.setTriggerValue) {
      // Before what this page holds: the server looks up the label before it.
      const first = this.reviewing !== null ? this.history[0].item : this.onScreen();
      this.setTriggerValue("back", {before: first, n: ++this.seq});
    }
  }

  // Streamlit took the queue's element away: another page opened, or the element is about to be drawn anew.
  left() {
    this.leftAt = performance.now();
    this.leftItem = this.onScreen();
    this.leftPage = location.pathname;
  }

  // A key pressed while the queue is off the page, kept for the item on screen when it went (the first such key
  // alone: the person could not see what a second one would decide); not on another page.
  keep(key) {
    if (this.leftAt === null || performance.now() - this.leftAt > REDRAW_MS || location.pathname !== this.leftPage ||
        !this.keys[key]) return false;
    this.kept ??= {key, item: this.leftItem, at: performance.now()};
    return true;
  }

  // Back on the page: the kept key decides its item if that item is on screen again, else it is dropped.
  useKept() {
    const kept = this.kept;
    this.kept = null;
    this.leftAt = null;
    if (!kept || kept.item === null || performance.now() - kept.at > REDRAW_MS) return;
    if (this.onScreen() === kept.item) {
      this.press(kept.key);
    } else {
      this.userMessage = "The page was redrawn: that key was not used.";
      this.drawStatus();
    }
  }

  // Nothing on screen, nothing waiting and the server has not said the queue is empty, for a while: an answer
  // with the next items went missing (a run of the page cut short), so ask again.
  starved(now) {
    return !this.pending.length && !this.emptyText && this.onScreen() === null && now - this.sentAt > RESEND_MS &&
      now - this.answeredAt > RESEND_MS;
  }

  // After the frame that shows the next item (sending costs the page a little work).
  sendSoon() {
    if (this.sending) return;
    this.sending = true;
    requestAnimationFrame(() => setTimeout(() => {
      this.sending = false;
      this.send();
    }, 0));
  }

  send() {
    if (!this.setStateValue) return;
    this.sentAt = performance.now();
    const decisions = this.pending.map((decision) => ({...decision, key: decision.at + this.offset}));
    const have = this.order.filter((id) => this.items.has(id));
    this.setStateValue("sent", {decisions, have, n: ++this.seq});
    this.drawStatus();
  }
}

// A page that walks a queue in its own order (its `page.walk`: Review): the items around the one on screen held
// here by their place in the walk. Its keys' actions: a `decision` (Review's verdicts), "agree" (the item's
// `judge`), "back" and "next" (move without deciding), "source" (M: the math as written), and the number keys
// 1..9 toggle the page's tags (data `tags`). The decisions travel as Annotate's do (pending, sent until answered,
// kept in storage).
const REVIEW_KEEP = 45;  // transcripts kept here either side of the one on screen (the server sends 20 each side)

class ReviewQueue extends Queue {
  constructor(storeKey, page) {
    super(storeKey, page);
    for (let i = 1; i <= 9; i++) this.keys[String(i)] = {key: String(i), action: "tag", index: i - 1, once: true};
    this.walk = new Map();  // place in the walk -> transcript id
    this.end = null;  // the walk's length once its end is known
    this.size = 0;
    this.position = null;
    this.mine = new Map();  // transcript id -> {human, tags, comment} as reviewed here
    this.tags = [];  // the tags chosen for the transcript on screen
    this.source = null;  // the transcript whose math is shown as written (M)
    this.tagList = [];
    this.open = new Set(JSON.parse(localStorage.getItem("annotatorReviewSections") || "[]"));
  }

  attach(parent) {
    if (this.root && this.root.parentNode === parent) return;
    this.root = el("div", "aq-root aq-review");
    this.root.tabIndex = -1;
    this.heading = el("h4", "aq-heading", "Loading the transcript...");
    const bar = el("div", "aq-buttons");
    this.buttons = {};
    const add = (box, key, shown, text, kind) => {
      const button = el("button", "aq-button aq-" + kind + " aq-key-" + key);
      button.type = "button";
      button.dataset.key = key;
      button.appendChild(el("span", "aq-button-text", text));
      if (shown) button.appendChild(el("kbd", null, shown));
      button.addEventListener("click", () => this.press(key));
      this.buttons[key] = button;
      box.appendChild(button);
      return button;
    };
    for (const spec of this.page.keys) {
      if (spec.action !== "source") add(bar, spec.key.toLowerCase(), spec.key, spec.text, spec.kind || "secondary");
    }
    this.tagBar = el("div", "aq-buttons aq-tags");
    this.status = el("div", "aq-status");
    this.indicator = el("span", "aq-indicator", "");
    this.indicator.setAttribute("role", "status");
    this.place = el("span", "aq-place", "");
    this.reviewed = el("span", "aq-reviewed", "");
    this.message = el("span", "aq-message", "");
    this.status.append(this.indicator, this.place, this.reviewed, this.message);
    this.comment = el("input", "aq-comment");
    this.comment.type = "text";
    this.comment.placeholder = "Comment, optional, saved with the verdict (C to write, Esc to leave)";
    this.comment.setAttribute("aria-label", "Comment");
    const toggles = el("div", "aq-toggles");
    this.reasoningToggle = el("button", "aq-toggle", "Reasoning");
    this.reasoningToggle.type = "button";
    this.reasoningToggle.addEventListener("click", () => this.toggle("Reasoning"));
    this.clearButton = el("button", "aq-toggle aq-clear", "Clear my review (the judge's verdict counts again)");
    this.clearButton.type = "button";
    this.clearButton.addEventListener("click", () => this.clearReview());
    toggles.append(this.reasoningToggle, this.clearButton);
    this.stage = el("div", "aq-stage");
    this.empty = el("div", "aq-empty");
    this.empty.hidden = true;
    this.restart = el("button", "aq-toggle aq-restart", "Start again from the top");
    this.restart.type = "button";
    this.restart.hidden = true;
    this.restart.addEventListener("click", () => this.setTriggerValue && this.setTriggerValue("restart", ++this.seq));
    this.root.append(this.heading, bar, this.tagBar, this.status, this.comment, toggles, this.empty, this.restart,
      this.stage);
    for (const old of parent.querySelectorAll(":scope > .aq-root")) old.remove();
    parent.appendChild(this.root);
    this.nodes.clear();
    this.current = undefined;
    this.drawnTags = null;
    this.showSections();
  }

  toggle(title) {
    if (this.open.has(title)) this.open.delete(title); else this.open.add(title);
    localStorage.setItem("annotatorReviewSections", JSON.stringify([...this.open]));
    this.showSections();
    this.draw();  // the reasoning on screen drawn now, if it was not
  }

  showSections() {
    const on = this.open.has("Reasoning");
    this.reasoningToggle.classList.toggle("aq-on", on);
    this.root.classList.toggle("aq-open-reasoning", on);
  }

  update(data, setStateValue, setTriggerValue) {
    this.setStateValue = setStateValue;
    this.setTriggerValue = setTriggerValue;
    this.answeredAt = performance.now();
    this.learnOffset(data.now);
    this.userMessage = data.message || "";
    this.emptyText = data.empty || "";
    this.blind = Boolean(data.blind);
    this.tagList = Array.isArray(data.tags) ? data.tags : [];
    if (data.generation !== this.generation) {
      // Another walk (the filters, blind mode, the queue opened again): from the server's place in it.
      this.walk.clear();
      this.items.clear();
      for (const node of this.nodes.values()) node.remove();
      this.nodes.clear();
      this.generation = data.generation;
      this.position = null;
    }
    for (const item of data.items || []) this.items.set(item.id, item);
    const walk = data.walk || {};
    (walk.ids || []).forEach((id, i) => this.walk.set(walk.start + i, id));
    this.end = typeof walk.end === "number" ? walk.end : null;
    this.size = walk.size || 0;
    if (this.position === null) this.go(typeof data.position === "number" ? data.position : 0);
    this.forget();
    if (data.again) {
      clearTimeout(this.againTimer);
      this.againTimer = setTimeout(() => this.send(), 1000 + Math.random() * 1500);
    }
    if (this.pending.length && performance.now() - this.sentAt > RESEND_MS) this.send();
    this.draw();
  }

  // Nothing on screen is the walk's end or its next part on the way (`again`), never a missing answer.
  starved() {
    return false;
  }

  // Items far from the one on screen are let go (the server sends them again when the reviewer gets near).
  forget() {
    const near = new Set();
    for (let place = this.position - REVIEW_KEEP; place <= this.position + REVIEW_KEEP; place++) {
      if (this.walk.has(place)) near.add(this.walk.get(place));
    }
    for (const id of this.items.keys()) if (!near.has(id)) this.items.delete(id);
  }

  answer(outcomes) {
    const before = this.pending.length;
    let back = null;
    this.pending = this.pending.filter((decision) => {
      const outcome = outcomes[decision.id];
      if (outcome === undefined) return true;
      tell("answered", decision.id, outcome);
      if (outcome !== "saved") {
        const item = this.items.get(decision.item);
        this.refused.push((item ? item.data_id : "#" + decision.item) + ": " + outcome);
        this.mine.delete(decision.item);
        back ??= decision;
      }
      return false;
    });
    if (this.pending.length !== before) this.save();
    if (back) {
      // The transcript whose review was refused comes back on screen, as it was reviewed.
      for (const [place, id] of this.walk) {
        if (id === back.item) {
          this.go(place);
          this.tags = Array.isArray(back.tags) ? [...back.tags] : [];
          this.comment.value = back.comment || "";
          break;
        }
      }
    }
    return this.pending.length !== before;
  }

  onScreen() {
    return this.walk.get(this.position) ?? null;
  }

  reviewOf(id) {
    return this.mine.get(id) || this.items.get(id)?.mine || {human: null, tags: [], comment: ""};
  }

  // To place `place` of the walk: its tags and comment as last reviewed, its math typeset.
  go(place) {
    this.position = Math.max(0, this.end === null ? place : Math.min(place, this.end));
    const id = this.onScreen();
    const review = id === null ? null : this.reviewOf(id);
    this.tags = review ? [...review.tags] : [];
    this.comment.value = review ? review.comment || "" : "";
    this.source = null;
  }

  atEnd() {
    return this.end !== null && this.position >= this.end;
  }

  press(key) {
    const spec = this.keys[key];
    if (!spec) return;
    const id = this.onScreen();
    const item = id === null ? null : this.items.get(id);
    const moves = spec.action === "back" || spec.action === "next";
    if (spec.action === "back") {
      if (this.position > 0) this.go(this.position - 1);
    } else if (spec.action === "next") {
      if (!this.atEnd()) this.go(this.position + 1);
    } else if (!item) {
      this.userMessage = "No " + this.page.noun + " on screen: that key was not used.";
      this.drawStatus();
      return;
    } else if (spec.decision) {
      this.decide({...spec.decision}, id);
    } else if (spec.action === "agree") {
      if (this.blind || !item.judge) {
        this.userMessage = this.page.no_judge || "Nothing to agree with here.";
        this.drawStatus();
        return;
      }
      this.decide({agree: true}, id, item.judge);
    } else if (spec.action === "source") {
      this.source = this.source === id ? null : id;
    } else if (spec.action === "tag") {
      const tag = this.tagList[spec.index];
      if (tag === undefined) return;
      this.tags = this.tags.includes(tag) ? this.tags.filter((t) => t !== tag) : [...this.tags, tag];
    } else {
      return;
    }
    if (moves) {
      this.refused = [];
      this.userMessage = "";
      this.sendSoon();  // the server sends what is around the new place
    }
    this.draw();
  }

  decide(what, id, verdict) {
    // `walk`: the walk it was made on, so that the server knows one made before a reload.
    const decision = {id: uuid(), item: id, at: Date.now(), spent: Math.round(performance.now() - this.shownAt),
      tags: [...this.tags], comment: this.comment.value.trim(), walk: this.generation, ...what};
    this.refused = [];
    this.userMessage = "";
    this.pending.push(decision);
    tell("decided", decision.id, null);
    this.save();
    this.mine.set(id, what.clear ? {human: null, tags: [], comment: ""}
      : {human: verdict || what.verdict, tags: decision.tags, comment: decision.comment});
    if (!what.clear) this.go(this.position + 1);
    this.sendSoon();
  }

  clearReview() {
    const id = this.onScreen();
    if (id === null) return;
    this.decide({clear: true, tags: [], comment: ""}, id);
    this.go(this.position);
    this.draw();
  }

  send() {
    if (!this.setStateValue) return;
    this.sentAt = performance.now();
    const decisions = this.pending.map((decision) => ({...decision, key: decision.at + this.offset}));
    this.setStateValue("sent", {decisions, have: [...this.items.keys()], position: this.position,
      generation: this.generation, n: ++this.seq});
    this.drawStatus();
  }

  draw() {
    if (!this.root) return;
    const id = this.onScreen();
    const item = id === null ? null : this.items.get(id) ?? null;
    const shown = item ? id : null;
    const changed = shown !== this.current;
    const above = changed && this.root.getBoundingClientRect().top < 0;
    if (shown !== null && !this.nodes.has(shown)) this.build(shown);
    if (changed) {
      const old = this.nodes.get(this.current);
      if (old) old.hidden = true;
      this.current = shown;
      this.shownAt = performance.now();
      if (above) this.toTop();
    }
    this.heading.textContent = item ? item.heading
      : this.atEnd() ? (this.size ? "Nothing left to review" : "No transcripts") : "Loading the transcript...";
    const node = this.nodes.get(shown);
    if (node) {
      node.hidden = false;
      this.showSource(node, this.source === shown);
    }
    const none = item === null;
    for (const [key, button] of Object.entries(this.buttons)) {
      const {action} = this.keys[key];
      button.disabled = action === "back" ? this.position === 0 : action === "next" ? this.atEnd()
        : action === "agree" ? none || this.blind || !item.judge : none;
    }
    this.drawTags(none);
    const review = none ? null : this.reviewOf(shown);
    this.clearButton.hidden = !review || !review.human;
    this.reasoningToggle.hidden = !item || !item.reasoning;
    if (item && item.reasoning) this.reasoningToggle.textContent = item.reasoning.title;
    this.empty.hidden = !this.atEnd();
    this.empty.textContent = this.atEnd() ? this.emptyText : "";
    this.restart.hidden = !this.atEnd() || !this.size;
    this.comment.hidden = none;
    this.root.dataset.item = shown === null ? "" : String(shown);
    this.root.dataset.position = String(this.position);
    let ready = 0;
    while (this.items.has(this.walk.get(this.position + ready))) ready++;
    this.root.dataset.ready = String(ready);  // held here from the one on screen on
    this.drawStatus();
    this.later();
  }

  drawTags(none) {
    const typeset = this.current !== null && this.source !== this.current;
    const want = JSON.stringify([this.tagList, this.tags, none, typeset]);
    if (want === this.drawnTags) return;
    this.drawnTags = want;
    this.tagBar.replaceChildren();
    this.tagList.forEach((tag, i) => {
      const chosen = this.tags.includes(tag);
      const button = el("button", "aq-button aq-tag " + (chosen ? "aq-primary aq-on" : "aq-secondary"));
      button.type = "button";
      button.dataset.key = String(i + 1);
      button.appendChild(el("span", "aq-button-text", (chosen ? "✓ " : "") + tag));
      button.appendChild(el("kbd", null, String(i + 1)));
      button.disabled = none;
      button.addEventListener("click", () => this.press(String(i + 1)));
      this.tagBar.appendChild(button);
    });
    const math = el("button", "aq-button aq-typeset " + (typeset ? "aq-primary aq-on" : "aq-secondary"));
    math.type = "button";
    const spec = this.page.keys.find((key) => key.action === "source");
    math.appendChild(el("span", "aq-button-text", (typeset ? "✓ " : "") + (spec ? spec.text : "Typeset math")));
    math.appendChild(el("kbd", null, spec ? spec.key : "M"));
    math.disabled = none;
    math.addEventListener("click", () => spec && this.press(spec.key.toLowerCase()));
    this.tagBar.appendChild(math);
  }

  drawStatus() {
    super.drawStatus();
    const id = this.current;
    const item = id === null || id === undefined ? null : this.items.get(id);
    this.place.textContent = this.size ? `${Math.min(this.position + 1, this.size)} of ${this.size}` : "";
    const parts = [];
    if (item && item.reason && !this.blind) parts.push("in the queue because: " + item.reason);
    const review = item ? this.reviewOf(id) : null;
    this.reviewed.textContent = review && review.human ? "Reviewed: " + (this.page.verdicts || {})[review.human] : "";
    this.reviewed.hidden = !this.reviewed.textContent;
    if (this.userMessage) parts.push(this.userMessage);
    this.message.textContent = parts.join(" · ");
  }

  // The response and the reasoning typeset, or as written (M); each drawn when first shown.
  showSource(node, source) {
    for (const box of node.querySelectorAll("[data-math]")) {
      const shown = (box.dataset.math === "source") === source;
      box.hidden = !shown;
      const closed = box.closest(".aq-reasoning") !== null && !this.open.has("Reasoning");
      if (shown && !closed && !box.firstChild) box.appendChild(runsNode(box.parentNode.runs, "div", source));
    }
  }

  build(id) {
    const node = reviewNode(this.items.get(id), this.page);
    node.classList.add("aq-ahead");  // laid out while hidden (queue.css)
    this.nodes.set(id, node);
    this.stage.appendChild(node);
  }

  // The one on screen, the next few and the one before (for B).
  wanted() {
    const wanted = [this.current];
    for (const place of [1, 2, 3, 4, -1]) {
      const id = this.walk.get(this.position + place);
      if (this.items.has(id)) wanted.push(id);
    }
    return wanted;
  }
}

// The response's or the reasoning's text typeset, and a box for it as written (filled when M first asks).
// `lazy`: the typeset text too is drawn only when first shown (the reasoning: long, and mostly left closed).
function modelText(runs, lazy = false) {
  const box = el("div", "aq-model-text");
  const typeset = lazy ? el("div", "aq-runs") : runsNode(runs, "div");
  typeset.dataset.math = "typeset";
  const source = el("div", "aq-runs");
  source.dataset.math = "source";
  source.hidden = true;
  box.runs = runs;
  box.append(typeset, source);
  return box;
}

function fieldsNode(fields) {
  const box = el("div", "aq-fields");
  for (const [name, runs] of fields || []) {
    const row = el("div", "aq-field");
    row.appendChild(el("strong", null, name + ": "));
    row.appendChild(runsNode(runs));
    box.appendChild(row);
  }
  return box;
}

// Review's transcript: the item's columns and fields (`itemNode`), then the response, the judge's reading and the
// reasoning.
function reviewNode(item, page) {
  const node = itemNode(item, page);
  const response = el("div", "aq-response");
  response.appendChild(el("div", "aq-column-title", item.response.title));
  response.appendChild(modelText(item.response.runs));
  node.appendChild(response);
  const judged = fieldsNode(item.judged);
  judged.classList.add("aq-judged");
  if (item.badge) judged.appendChild(el("div", "aq-badge", item.badge));
  node.appendChild(judged);
  if (item.reasoning) {
    const reasoning = el("div", "aq-section aq-reasoning");
    reasoning.appendChild(el("div", "aq-section-title", item.reasoning.title));
    reasoning.appendChild(modelText(item.reasoning.runs, true));
    node.appendChild(reasoning);
  }
  return node;
}

function registry() {
  window.__annotatorQueues ??= new Map();
  return window.__annotatorQueues;
}

// The page's queue under the keyboard: the one whose root is in the document.
function active() {
  for (const queue of registry().values()) if (queue.root && queue.root.isConnected) return queue;
  return null;
}

function typing(event) {
  return event.composedPath().find((node) => node.tagName &&
    (["INPUT", "TEXTAREA", "SELECT"].includes(node.tagName) || node.isContentEditable));
}

function onKey(event) {
  const queue = active();
  if (event.ctrlKey || event.metaKey || event.altKey || typeof event.key !== "string") return;
  if (!queue) {
    // Perhaps the queue is being drawn anew: the key waits for it (`keep`). It goes on to the page as well.
    if (event.repeat || typing(event)) return;
    for (const other of registry().values()) if (other.keep(event.key.toLowerCase())) break;
    return;
  }
  const field = typing(event);
  if (field) {
    if (field === queue.comment && (event.key === "Escape" || event.key === "Enter")) {
      event.preventDefault();
      field.blur();
      queue.root.focus({preventScroll: true});
    }
    return;
  }
  const key = event.key.toLowerCase();
  if (key === "c") {
    event.preventDefault();
    event.stopImmediatePropagation();  // Streamlit's own C (clear caches)
    queue.comment.focus();
    return;
  }
  const spec = queue.keys[key];
  if (!spec) return;
  event.preventDefault();
  event.stopImmediatePropagation();  // Streamlit's own keys (R reruns) come after
  // A held B would walk far back (a key marked `once`, as far); a held label key labels on.
  if (event.repeat && (spec.action === "back" || spec.once)) return;
  queue.press(key);
}

function bind() {
  if (window.__annotatorQueueBound) return;
  window.__annotatorQueueBound = true;
  window.addEventListener("keydown", onKey, true);
  setInterval(() => {
    const queue = active();
    const now = performance.now();
    if (queue?.starved(now)) queue.send();
    if (!queue || !queue.pending.length) return;
    if (now - queue.answeredAt > WAKE_MS && now - queue.wokenAt > WAKE_MS && window.__annotatorWake) {
      queue.wokenAt = now;
      window.__annotatorWake();  // a run of the whole app: its fragment may be unknown to a new server
    } else if (now - queue.sentAt > RESEND_MS) {
      queue.send();
    }
  }, 1000);
  window.addEventListener("online", () => active()?.send());
}

export default function (component) {
  const {data, parentElement, setStateValue, setTriggerValue} = component;
  if (data && data.ack === true) {
    registry().get(data.store)?.acknowledge(data);
    return undefined;
  }
  if (data && data.wake === true) {
    window.__annotatorWake = () => setTriggerValue("wake", Date.now());
    return undefined;
  }
  if (!data || typeof data.store !== "string") return undefined;
  bind();
  const queues = registry();
  let queue = queues.get(data.store);
  if (!queue) {
    // A page that walks a queue of its own order (Review), or one of items claimed ahead (Annotate).
    queue = data.page && data.page.walk ? new ReviewQueue(data.store, data.page) : new Queue(data.store, data.page);
    queues.set(data.store, queue);
  }
  queue.attach(parentElement);
  queue.update(data, setStateValue, setTriggerValue);
  queue.useKept();
  if (queue.pending.length && !queue.sentOnce) {
    queue.sentOnce = true;
    queue.send();  // decisions left from before a reload
  }
  return () => queue.left();
}
