// The web view's entry (docs/web-view.md): styles, the page, and the live feed it renders.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { render } from "preact";
import { App } from "./app.js";
import { connect } from "./store.js";

const root = document.getElementById("app");
if (root) {
  render(<App />, root);
  connect("api/events");
}
