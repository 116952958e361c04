/**
 * The page's only way to make DOM: elements from a tag, a few fixed
 * properties and children, where every string child becomes a text node.
 * Nothing here sets `innerHTML`, `href`, `src` or an event-handler attribute
 * from data, so an untrusted transcript string can only ever show as text.
 *
 * @module subagent-otel/view/page/dom
 */

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  readonly class?: string;
  readonly title?: string;
  /** `data-*` attributes (values are set as attribute text). */
  readonly data?: Readonly<Record<string, string>>;
  readonly onClick?: (event: MouseEvent) => void;
}

/** A new `<tag>` with `props` and `children` (strings and numbers as text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class !== undefined) node.className = props.class;
  if (props.title !== undefined) node.title = props.title;
  for (const [key, value] of Object.entries(props.data ?? {})) node.dataset[key] = value;
  if (props.onClick !== undefined) node.addEventListener('click', props.onClick);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'number' ? String(child) : child);
  }
  return node;
}

/** Replaces the children of `node`. */
export function fill(node: Element, ...children: Child[]): void {
  node.replaceChildren();
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'number' ? String(child) : child);
  }
}
