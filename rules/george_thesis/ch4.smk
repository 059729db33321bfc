# George thesis, chapter 4 and appendix A: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch4_<verb>.
