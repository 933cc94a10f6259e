// Package skills loads agent skills from a folder and gives agents the
// load_skill tool.
//
// A skill is a sub-folder of the skills folder holding a SKILL.md: a YAML
// front matter with a name and a description, then Markdown instructions.
// Other files of the sub-folder (scripts, references, templates) are the
// skill's resources.
//
//	skills/
//	  pdf-forms/
//	    SKILL.md          ---
//	    reference.md      name: pdf-forms
//	    scripts/fill.py   description: Fill PDF forms and read their fields.
//	                      ---
//	                      # Filling a form
//	                      ...
//
// Load reads the folder once into a Catalog:
//
//	cat, err := skills.Load(skills.Config{Dir: "skills"})
//	if err != nil {
//		return err
//	}
//	defer cat.Close()
//	for _, err := range cat.Refused { // malformed SKILL.md files, by file and line
//		log.Warn().Err(err).Msg("skill left out")
//	}
//	reg.MustRegister(cat.Tool())                 // load_skill
//	reg.MustRegister(cat.ReadFile(readFileTool)) // read_file, skill resources included
//	prompt := cat.Prompt()                       // the skills layer of the system prompt
//
// # Progressive disclosure
//
// Only names and descriptions reach every system prompt (Catalog.Prompt). A
// model that decides a skill applies calls load_skill, which returns the
// body and the absolute paths of the resources; it then reads those it
// needs with read_file.
//
// # Resources and the workspace
//
// The skills folder lies outside the workspace, and the file tools are
// confined to the workspace. Catalog.ReadFile wraps read_file, and only
// read_file: a call whose path is absolute and lies in a skill's folder
// runs with a workspace opened on that folder (an os.Root), so it can read
// the skill's files and nothing beside them: "..", symlinks that lead out
// of the folder (into another skill included) and hard-linked files are
// refused as in the workspace. No tool can write to a skill folder, and
// the workspace's own confinement is unchanged.
package skills
