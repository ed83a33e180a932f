// Greets the name in the event.
exports.handler = async (event) => ({ message: `Hi, ${(event && event.name) || "world"}!` });
