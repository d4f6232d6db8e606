// The frame every panel of the web view shares (docs/web-view.md): a titled section that scrolls inside.
import type { ComponentChildren } from "preact";

export function Panel(props: {
  id: "fleet" | "tickets" | "decisions" | "demand" | "trends";
  title: string;
  /** A short figure beside the title (a count). */
  note?: string;
  /** Controls at the right of the title bar. */
  tools?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class={`panel panel-${props.id}`} data-testid={`panel-${props.id}`} aria-label={props.title}>
      <header class="panel-head">
        <h2>{props.title}</h2>
        {props.note !== undefined && <span class="panel-note">{props.note}</span>}
        {props.tools !== undefined && <div class="panel-tools">{props.tools}</div>}
      </header>
      <div class="panel-body">{props.children}</div>
    </section>
  );
}
