"""Streamlit glue for specsim: navigation, state, cached loaders, widgets, figure builders."""
