// Renders the boiling point calculator; the HTML page itself carries no text.
(function () {
  var root = document.getElementById("root");
  root.innerHTML = '<h1>Boiling point calculator</h1>' +
    '<label>Altitude in metres <input id="alt" type="number" value="0"></label>' +
    '<p id="out"></p>';
  function update() {
    var metres = Number(document.getElementById("alt").value) || 0;
    var celsius = 100 - metres / 300;
    document.getElementById("out").textContent =
      "Water boils at about " + celsius.toFixed(1) + " °C at " + metres + " m.";
  }
  document.getElementById("alt").addEventListener("input", update);
  update();
})();
