export { parseHostPort } from "./host-port.js";
